import Dispatch
import Foundation
import JobConfig
import JobConfigStore
import JobMetrics
import JobProcesses
import JobStore
import JobValues
import Locking
import Logging
import Promises
import Synchronization

/// Runs the jobs of a store: claims them pool by pool, runs each as a
/// promise chain of its definition (see `JobRun+Chain.swift`), records every
/// stage in the store, renews leases, sees cancellations, and resumes jobs
/// whose runner died.
///
/// ```swift
/// let engine = Engine(configuration: EngineConfiguration(pools: ["default": 8]), definitions: set.definitions,
///                     store: store, processRunner: ProcessRunner())
/// engine.start()
/// engine.nudge()                       // a job was submitted
/// await engine.drain(grace: .seconds(30))  // SIGTERM
/// ```
///
/// No thread waits for a process, a timer or a write: everything is a
/// callback that resolves a promise.
public final class Engine: Sendable {
    /// The settings in force for new jobs: replaced by `reload`. A job keeps
    /// the context and definition it started with.
    private struct Generation {
        var context: EngineContext
        var definitions: [String: JobDefinition]
        var pools: [String: PoolScheduler]
    }

    /// What never changes: the store, timers, control queue, options, log.
    let context: EngineContext
    private let generation: Mutex<Generation>
    private let launchRelay: @Sendable (ClaimedJob, PoolScheduler, ContinuousClock.Instant) -> Void
    private let drainFlag = DrainFlag()
    /// The schedules' ticking (Engine+Schedules.swift).
    let scheduling = Mutex(SchedulingState())

    private struct State {
        var started = false
        /// By job and claim: a job this engine claimed again while an
        /// earlier run of it still ends (its lease was lost meanwhile) is
        /// two runs, each tracked to its end.
        var running: [RunKey: (run: JobRun, pool: PoolScheduler)] = [:]
        var drainWaiters: [@Sendable () -> Void] = []
        /// Drained: timers stop rescheduling.
        var finished = false
        /// Lease renewals (RenewalState.swift): one under way; since when renewals
        /// fail; jobs whose lease a locked row held up.
        var renewal = RenewalState()
    }

    private let state = Mutex(State())

    /// The `Q` queues stage bodies of new jobs run on.
    public var queues: StageQueues { generation.withAnnouncedLock { $0.context.queues } }

    var pools: [String: PoolScheduler] { generation.withAnnouncedLock { $0.pools } }

    /// The definitions new jobs run by, sorted by name.
    public var definitions: [JobDefinition] {
        generation.withAnnouncedLock { $0.definitions.values.sorted { $0.name < $1.name } }
    }

    /// What every running job shares (the first generation's: store, timers, log).
    var baseContext: EngineContext { context }

    var isDraining: Bool { drainFlag.isDraining }

    /// The names of the definitions new jobs run by, sorted.
    public var definitionNames: [String] { generation.withAnnouncedLock { $0.definitions.keys.sorted() } }

    /// The name this engine's leases carry.
    public var owner: String { context.owner }

    /// The zone schedules without `timezone:` are read in.
    public var hostTimeZone: TimeZone { context.configuration.hostTimeZone }

    /// - Parameters:
    ///   - processRunner: starts `run` and `shell` actions. Give each engine
    ///     its own, or share one on purpose: its event loop is the one
    ///     thread that watches every child it started. The engine's
    ///     completions are quick and never block (they resolve a promise
    ///     and queue a store write), so the runner may complete on its
    ///     loop's thread (`completesOnLoopThread`), as jobd's does.
    ///   - customAction: replaces a stage's action when it returns a
    ///     promise (tests: an action that loses its resolver).
    public init(
        configuration: EngineConfiguration, definitions: [JobDefinition], store: any EngineStore,
        processRunner: ProcessRunner, customAction: CustomAction? = nil
    ) {
        let deadlines = TimerHeap()
        let context = EngineContext(
            store: store, queues: StageQueues(configuration.queues),
            executor: ActionExecutor(
                runner: processRunner, deadlines: deadlines, baseEnvironment: ProcessEnvironment.inherited(),
                killGrace: configuration.killGrace, outputLimit: configuration.outputLimit, customAction: customAction,
                metrics: configuration.metrics),
            configuration: configuration, deadlines: deadlines,
            timers: DispatchQueue(label: "jobd.engine.timers"), control: DispatchQueue(label: "jobd.engine.control"),
            databaseClock: DatabaseClock(host: configuration.clock), liveLogs: LiveStageLogs())
        self.context = context
        let relay = LaunchRelay()
        launchRelay = { job, pool, sent in relay.engine?.launch(job, pool: pool, leaseSent: sent) }
        let launch = launchRelay
        let flows = ClaimFlow.byPool(definitions, poolLimits: configuration.poolLimits)
        let pools = configuration.pools.reduce(into: [String: PoolScheduler]()) { pools, entry in
            pools[entry.key] = PoolScheduler(
                name: entry.key, capacity: entry.value, flow: flows[entry.key] ?? .unlimited, context: context,
                launch: launch)
        }
        generation = Mutex(Generation(context: context, definitions: Self.byName(definitions), pools: pools))
        relay.engine = self
    }

    private static func byName(_ definitions: [JobDefinition]) -> [String: JobDefinition] {
        Dictionary(definitions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    // MARK: Reload

    /// Applies a new configuration (SIGHUP): definitions, `Q` queues, pool
    /// sizes, kill grace and output limit; the other settings stay as the
    /// engine was made. Jobs running now finish with the
    /// definition and queues they started with; jobs started from now on
    /// get the new ones. A pool that grew claims at once; one that shrank
    /// lets its running jobs finish and claims again once below its size.
    /// A pool no longer named stops claiming (its pending jobs wait).
    ///
    public func reload(_ configuration: EngineConfiguration, definitions: [JobDefinition]) {
        let queues = StageQueues(configuration.queues)
        var fresh = context
        fresh.queues = queues
        fresh.executor.killGrace = configuration.killGrace
        fresh.executor.outputLimit = configuration.outputLimit
        let launch = launchRelay
        let flows = ClaimFlow.byPool(definitions, poolLimits: configuration.poolLimits)
        let removed = generation.withAnnouncedLock { generation -> [PoolScheduler] in
            var pools: [String: PoolScheduler] = [:]
            for (name, capacity) in configuration.pools {
                let flow = flows[name] ?? .unlimited
                if let pool = generation.pools[name] {
                    pool.resize(to: capacity, flow: flow)
                    pools[name] = pool
                } else {
                    pools[name] = PoolScheduler(
                        name: name, capacity: capacity, flow: flow, context: context, launch: launch)
                }
            }
            let removed = generation.pools.filter { pools[$0.key] == nil }.map(\.value)
            generation = Generation(context: fresh, definitions: Self.byName(definitions), pools: pools)
            return removed
        }
        for pool in removed { pool.stop() }
        tickSchedules()
        if drainFlag.isDraining {
            for pool in pools.values { pool.stop() }
        } else {
            nudge()
        }
    }

    // MARK: Lifecycle

    /// Requeues the jobs of runners that died, and starts claiming, renewing
    /// leases and polling.
    public func start() {
        let first = state.withAnnouncedLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        scheduleRenewal()
        scheduleFenceCheck()
        schedulePoll()
        // Read the database's clock before the first claim and schedule
        // tick: both compare with stored times. Should the database not
        // answer, they go on with this host's clock until a later reading.
        readDatabaseClock {
            if self.context.configuration.requeuesExpiredLeases { self.requeueExpired() } else { self.nudge() }
            self.tickSchedules()
        }
    }

    /// New work was submitted: claim now instead of at the next poll.
    public func nudge() {
        guard state.withAnnouncedLock({ $0.started }) else { return }
        for pool in pools.values { pool.fill() }
    }

    /// Something about the schedules changed outside this engine (a pause
    /// ended): fire what is due now.
    public func lookAtSchedules() {
        guard state.withAnnouncedLock({ $0.started }), definitions.contains(where: { !$0.schedules.isEmpty }) else {
            return
        }
        tickSchedules()
    }

    /// Stops claiming; stages running now may finish within `grace`, then
    /// their process groups are ended. Jobs stay unresolved and resumable:
    /// the next engine on this store picks them up where they stopped.
    /// `completion` runs once every job has stopped.
    public func drain(grace: Duration, completion: @escaping @Sendable () -> Void) {
        drainFlag.set()
        stopSchedules()
        for pool in pools.values { pool.stop() }
        let idle = state.withAnnouncedLock { state -> Bool in
            if state.running.isEmpty {
                state.finished = true
                return true
            }
            state.drainWaiters.append(completion)
            return false
        }
        if idle {
            completion()
            return
        }
        context.log(.info, "draining: running stages have \(grace.jobdText) to finish")
        context.timers.asyncAfter(deadline: .now() + grace.dispatchInterval) {
            let runs = self.state.withAnnouncedLock { $0.running.values.map(\.run) }
            for run in runs {
                run.stop(
                    EngineError(
                        .draining,
                        "jobd is stopping and the shutdown grace of \(grace.jobdText) passed: job \(run.id) stops here and resumes later",
                        jobID: run.id))
            }
        }
    }

    public func drain(grace: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            drain(grace: grace) { continuation.resume() }
        }
    }

    // MARK: Status

    /// Jobs running in this engine now.
    public var runningCount: Int { state.withAnnouncedLock { $0.running.count } }

    public func status() async throws -> EngineStatus {
        let pending = try await context.store.countJobs(in: [.pending])[.pending] ?? 0
        return EngineStatus(
            running: runningCount, pending: pending,
            runningByPool: pools.mapValues(\.running), draining: drainFlag.isDraining)
    }

    // MARK: Jobs

    private func launch(_ claimed: ClaimedJob, pool: PoolScheduler, leaseSent: ContinuousClock.Instant) {
        let store = context.store
        let (current, definition, definitions) = generation.withAnnouncedLock {
            ($0.context, $0.definitions[claimed.job.definition], $0.definitions)
        }
        guard let definition else {
            let message =
                "no job definition named `\(claimed.job.definition)` is loaded; add jobs.d/\(claimed.job.definition).yaml and retry the job"
            context.log(.error, message, job: claimed.job.id)
            let metrics = context.configuration.metrics
            let finish = JobFinish(
                lease: claimed.lease, outcome: .rejected(message), at: context.databaseClock.now(),
                parentID: claimed.job.parentID)
            store.finish(finish) { result in
                if case .success = result {
                    metrics.jobResolved(definition: claimed.job.definition, state: JobState.rejected)
                }
                pool.jobEnded()
            }
            return
        }
        let run = JobRun(
            context: current, claimed: claimed, definition: definition, definitions: definitions, drain: drainFlag,
            leaseConfirmed: leaseSent
        ) { [weak self] run in
            self?.ended(run)
        }
        let earlier = state.withAnnouncedLock { state -> [JobRun] in
            state.running[RunKey(run.lease)] = (run, pool)
            return state.running.values.map(\.run).filter { $0.id == run.id && $0 !== run }
        }
        for stale in earlier {
            stale.stop(
                EngineError(
                    .leaseLost, "job \(run.id) was claimed again (its lease had expired): its earlier run here stops",
                    jobID: run.id))
        }
        run.start()
    }

    private func ended(_ run: JobRun) {
        let (pool, waiters) = state.withAnnouncedLock { state -> (PoolScheduler?, [@Sendable () -> Void]) in
            let pool = state.running.removeValue(forKey: RunKey(run.lease))?.pool
            guard drainFlag.isDraining, state.running.isEmpty else { return (pool, []) }
            state.finished = true
            defer { state.drainWaiters = [] }
            return (pool, state.drainWaiters)
        }
        pool?.jobEnded()
        context.liveLogs.changed(run.id)
        context.configuration.onJobEnd?(run.id)
        if run.claimed.job.scheduledFor != nil { scheduledJobEnded() }
        for waiter in waiters { waiter() }
    }

    // MARK: Leases and polling

    private func scheduleRenewal() {
        context.timers.asyncAfter(deadline: .now() + context.configuration.renewInterval.dispatchInterval) {
            [weak self] in
            guard let self, !self.state.withAnnouncedLock({ $0.finished }) else { return }
            self.renewLeases()
            self.readDatabaseClock()
            self.scheduleRenewal()
        }
    }

    /// The runs of job `id` in this engine now (more than one only while
    /// an earlier run of a job claimed again ends).
    func runs(of id: Int64) -> [JobRun] {
        state.withAnnouncedLock { $0.running.values.map(\.run).filter { $0.id == id } }
    }

    /// The leases of the jobs running here, for ``JobRunStore/requeueExpiredLeases(sparing:completion:)``
    /// to leave alone, whatever the wall clock says of their expiry.
    public var runningLeases: [Lease] {
        state.withAnnouncedLock { $0.running.values.map(\.run.lease) }
    }

    /// Extends the running jobs' leases; stops the jobs whose lease was lost
    /// and those with a cancellation requested. One renewal at a time: while
    /// one waits for the database, the next is skipped. A failure is logged
    /// once, and the recovery when a renewal goes through again.
    func renewLeases() {
        let runs = state.withAnnouncedLock { state -> [JobRun]? in
            guard !state.running.isEmpty, !state.renewal.underWay else { return nil }
            state.renewal.underWay = true
            return state.running.values.map(\.run)
        }
        guard let runs else { return }
        // The leases renewed were set no earlier than now (LeaseFence).
        let sent = ContinuousClock.now
        context.store.renew(runs.map(\.lease), leaseDuration: context.configuration.leaseDuration) { result in
            let notes = self.state.withAnnouncedLock { $0.renewal.finished(result) }
            for note in notes { self.context.log(note.level, note.message, job: note.job) }
            guard case let .success(renewal) = result else { return }
            // By lease, not by job: of two runs of one job, the earlier claim's is the one lost.
            let renewed = Set(renewal.renewed.map(RunKey.init))
            let (lost, cancelled) = (Set(renewal.lost), Set(renewal.cancellationRequested))
            for run in runs {
                let held = renewed.contains(RunKey(run.lease))
                if held { run.confirmLease(sent: sent) }
                if !held, lost.contains(run.id) {
                    run.stop(
                        EngineError(
                            .leaseLost,
                            "job \(run.id) is no longer this engine's: its lease expired and another runner may hold it",
                            jobID: run.id))
                } else if held, cancelled.contains(run.id) {
                    run.stop(EngineError(.cancelled, "cancelled: a cancellation was requested", jobID: run.id))
                }
            }
        }
    }

    /// The fence of this engine's leases (LeaseFence.swift).
    var fence: LeaseFence {
        LeaseFence(lease: context.configuration.leaseDuration, killGrace: context.configuration.killGrace)
    }

    private func scheduleFenceCheck() {
        context.timers.asyncAfter(deadline: .now() + fence.checkInterval.dispatchInterval) { [weak self] in
            guard let self, !self.state.withAnnouncedLock({ $0.finished }) else { return }
            self.fenceUnrenewedRuns()
            self.scheduleFenceCheck()
        }
    }

    /// Stops the runs whose lease was not confirmed for so long that it may
    /// expire before another check: their processes get SIGTERM, then
    /// SIGKILL after the fence's grace, before another host may claim the
    /// job (the database was unreachable, or the job's row locked). The job
    /// is let go unresolved; it runs again where it is claimed next.
    func fenceUnrenewedRuns(now: ContinuousClock.Instant = .now) {
        let fence = self.fence
        let runs = state.withAnnouncedLock { $0.running.values.map(\.run) }
        for run in runs where fence.mustStop(confirmed: run.leaseConfirmed, now: now) && !run.isHalted {
            let silent = now - run.leaseConfirmed
            var error = EngineError(
                .leaseLost,
                "job \(run.id): its lease of \(fence.lease.jobdText) was last renewed \(silent.jobdText) ago (the "
                    + "database unreachable, or its row locked): its processes are stopped so that they end before "
                    + "the lease can expire and another host claim the job",
                jobID: run.id)
            error.stopGrace = fence.grace
            run.stop(error)
        }
    }

    private func schedulePoll() {
        context.timers.asyncAfter(deadline: .now() + context.configuration.pollInterval.dispatchInterval) {
            [weak self] in
            guard let self, !self.state.withAnnouncedLock({ $0.finished }), !self.drainFlag.isDraining else { return }
            if self.context.configuration.requeuesExpiredLeases { self.requeueExpired() } else { self.nudge() }
            self.schedulePoll()
        }
    }

    /// Puts the jobs of runners whose lease expired back to pending, then claims.
    private func requeueExpired() {
        context.store.requeueExpiredLeases(sparing: runningLeases) { result in
            switch result {
            case let .success(ids) where !ids.isEmpty:
                self.context.log(
                    .info,
                    "requeued \(ids.count) job(s) whose runner stopped: \(ids.prefix(20).map(String.init).joined(separator: ", "))"
                )
            case .success:
                break
            case let .failure(error):
                self.context.log(.error, "could not requeue expired leases: \(error)")
            }
            self.context.control.async { self.nudge() }
        }
    }
}

/// Lets the pools, made before the engine, reach it.
private final class LaunchRelay: @unchecked Sendable {
    // @unchecked Sendable: `engine` is written once, in `Engine.init`,
    // before any pool can claim (claims start in `start()`); it is only
    // read after that.
    weak var engine: Engine?
}

/// A run of a job, as its lease names it: the job and the claim.
struct RunKey: Hashable, Sendable {
    var jobID: Int64
    var claim: Int

    init(_ lease: Lease) {
        (jobID, claim) = (lease.jobID, lease.claim)
    }
}
