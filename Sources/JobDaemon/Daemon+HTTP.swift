import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobDashboard
import JobEngine
import JobHTTP
import JobMetrics
import JobStore
import Locking
import Logging
import ServiceLifecycle

extension Daemon {
    /// `/metrics` and the dashboard on `http.listen`, as a service of jobd's
    /// group.
    func httpService(_ http: HTTPConfiguration) -> HTTPListenerService {
        let source = StoreDashboardSource(
            store: store, snapshot: { [self] in await dashboardSnapshot() }, waitRules: { [self] in waitRules() })
        var actions = DashboardActions(store)
        let engine = self.engine
        actions?.scheduleJob = { name in
            guard let definition = engine.definitions.first(where: { $0.name == name }),
                let schedule = definition.schedules.first
            else { return nil }
            return definition.newJob(input: schedule.input)
        }
        let dashboard = Dashboard(source: source, actions: actions) { [store] in
            (store as? any ReleasesIdleMemory)?.releaseIdleMemory()
        }
        state.withAnnouncedLock { $0.dashboard = dashboard }
        let access: DashboardAccess?
        let accessError: UserTableError?
        do {
            access = try DashboardAccess(
                http.access, listen: http.listen, environment: ProcessInfo.processInfo.environment)
            accessError = nil
        } catch {
            (access, accessError) = (nil, error)
        }
        let node = state.withAnnouncedLock { $0.config.node }
        let service = JobHTTPService(
            address: http.listen, dashboard: dashboard,
            exposition: { [self] in await metricsExposition() }, logger: logger, access: access, node: node,
            onListening: { [logger, listenerStarted] address in
                logger.info("HTTP: /metrics and the dashboard on \(address)")
                listenerStarted.finish(true)
            })
        return HTTPListenerService(daemon: self, listener: service, accessError: accessError)
    }

    /// What `GET /metrics` and `jobctl metrics` print: the registry, with
    /// the pending-job gauges counted first.
    func metricsExposition() async -> [UInt8] {
        await updatePendingGauges()
        await updateWaitingGauges()
        return prometheus.exposition()
    }

    /// What this jobd claims by, to judge why pending jobs wait: its pools
    /// and its definitions' limits, as they are now (after a reload too).
    func waitRules() -> WaitRules {
        WaitRules(config: state.withAnnouncedLock { $0.config }, definitions: engine.definitions)
    }

    /// `jobd_jobs_waiting{reason}`: the pending jobs by why they wait, one
    /// pass over the pending jobs at each scrape; if the store cannot be
    /// read, the gauges keep their last values.
    func updateWaitingGauges() async {
        do {
            prometheus.metrics.setJobsWaiting(byReason: try await store.waitingJobCounts(rules: waitRules()))
        } catch {
            logger.warning("metrics: could not count the pending jobs by why they wait: \(error)")
        }
    }

    /// `jobd_jobs_pending{pool}` as the store holds them now: each pool of
    /// jobd.yaml (0 when it has none) and any other pool the store has
    /// pending jobs for. Counted in the claim index alone; if the store
    /// cannot be read, the gauges keep their last values.
    func updatePendingGauges() async {
        let configured = state.withAnnouncedLock { $0.config.pools.keys }
        do {
            var pending = Dictionary(uniqueKeysWithValues: configured.map { ($0, 0) })
            for count in try await store.jobCountsByPool() { pending[count.pool] = count.pending }
            prometheus.metrics.setJobsPending(byPool: pending)
        } catch {
            logger.warning("metrics: could not count the pending jobs: \(error)")
        }
    }

    /// What the dashboard shows besides the store: pools, schedules and this jobd.
    func dashboardSnapshot() async -> DashboardSnapshot {
        let config = state.withAnnouncedLock { $0.config }
        let running = (try? await engine.status().runningByPool) ?? [:]
        let pools = config.pools.keys.sorted().map { name in
            PoolRow(name: name, capacity: config.pools[name] ?? 0, running: running[name] ?? 0)
        }
        let schedules = (try? await ScheduleStatus.all(of: engine.definitions, store: store)) ?? []
        var paused: [String: Pause] = [:]
        if !schedules.isEmpty {
            for pause in (try? await store.pauses()) ?? [] where pause.scope == .schedule { paused[pause.name] = pause }
        }
        return DashboardSnapshot(
            pools: pools,
            schedules: schedules.map { status in
                ScheduleRow(
                    definition: status.definition, expression: "\(status.schedule.expression) (\(status.zoneName))",
                    nextFire: status.next, lastFired: status.firedThrough, lastState: status.lastJob?.state,
                    paused: paused[status.definition])
            },
            build: BuildInfo(version: JobdVersion.string, node: config.node, startedAt: startedAt))
    }
}

/// The HTTP listener in jobd's group. It was asked for: one that cannot
/// listen (the port taken, the sandbox without IP sockets) stops jobd with
/// exit 69 and a line that says what to do, rather than leave it running
/// without the metrics someone alerts on.
struct HTTPListenerService: Service, CustomStringConvertible {
    let daemon: Daemon
    let listener: JobHTTPService
    /// Why the listener's access rules could not be set up (the users file), if so.
    let accessError: UserTableError?

    var description: String { "HTTP listener \(listener.address)" }

    func run() async throws {
        do {
            // A users file that cannot be used ends jobd as a listener that cannot bind does.
            if let accessError { throw accessError }
            try await listener.run()
        } catch {
            daemon.fail("\(error)", status: JobdExit.unavailable)
            daemon.listenerStarted.finish(false)
            throw error
        }
    }
}
