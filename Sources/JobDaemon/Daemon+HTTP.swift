import Foundation
import JobConfig
import JobControl
import JobDashboard
import JobEngine
import JobHTTP
import JobMetrics
import JobStore
import Locking
import Logging

extension Daemon {
    /// `/metrics` and the dashboard on `http.listen`.
    func httpService(_ http: HTTPConfig) -> JobHTTPService {
        let source = StoreDashboardSource(store: store) { [self] in await dashboardSnapshot() }
        let prometheus = self.prometheus
        return JobHTTPService(
            address: http.listen, dashboard: Dashboard(source: source),
            exposition: { prometheus.exposition() }, logger: logger,
            onListening: { [logger] address in logger.info("HTTP: /metrics and the dashboard on \(address)") })
    }

    /// What the dashboard shows besides the store: pools and this jobd.
    func dashboardSnapshot() async -> DashboardSnapshot {
        let config = state.withAnnouncedLock { $0.config }
        let running = (try? await engine.status().runningByPool) ?? [:]
        let pools = config.pools.keys.sorted().map { name in
            PoolRow(name: name, capacity: config.pools[name] ?? 0, running: running[name] ?? 0)
        }
        return DashboardSnapshot(
            pools: pools, build: BuildInfo(version: JobdVersion.string, node: engine.owner, startedAt: startedAt))
    }
}
