import Foundation
import JobConfig
import JobDashboard
import JobHTTP
import JobMetrics
import JobValues
import Logging
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// Runs a ``JobHTTPService`` in a ServiceGroup for the duration of `body`,
/// then shuts it down gracefully and waits for it.
@discardableResult
func withHTTPService<T: Sendable>(
    address: HTTPListenAddress = .tcp(host: "127.0.0.1", port: 0),
    dashboard: Dashboard, prometheus: PrometheusJobMetrics = PrometheusJobMetrics(version: "test"),
    // Deadlines far above the shipped 2 s and 10 s, so that a test of
    // something else is not cut off while the whole suite loads the machine;
    // the tests of the deadlines give their own (ConnectionLimitTests).
    limits: ConnectionLimits = ConnectionLimits(headerDeadline: .seconds(60), writeDeadline: .seconds(60)),
    access: DashboardAccess? = nil, logger givenLogger: Logger? = nil,
    _ body: @Sendable (HTTPEndpoint) async throws -> T
) async throws -> T {
    let bound = AsyncStream.makeStream(of: JobHTTPService.BoundAddress.self)
    var logger = givenLogger ?? Logger(label: "jobhttp-test")
    if givenLogger == nil { logger.logLevel = .warning }
    let service = JobHTTPService(
        address: address, dashboard: dashboard, exposition: { prometheus.exposition() }, logger: logger,
        limits: limits, access: access, onListening: { bound.continuation.yield($0) })
    let group = ServiceGroup(configuration: .init(services: [service], logger: logger))
    return try await withThrowingTaskGroup(of: T?.self) { tasks in
        tasks.addTask {
            defer { bound.continuation.finish() }
            try await group.run()
            return nil
        }
        var iterator = bound.stream.makeAsyncIterator()
        guard let address = await iterator.next() else {
            // The service ended before it listened: its error, if it threw one.
            try await tasks.waitForAll()
            throw TestFailure("the service ended without listening")
        }
        do {
            let result = try await body(address.endpoint)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

extension JobHTTPService.BoundAddress {
    var endpoint: HTTPEndpoint {
        switch self {
        case .tcp(let host, let port): .tcp(host: host, port: port)
        case .unix(let path): .unix(path: path)
        }
    }
}
