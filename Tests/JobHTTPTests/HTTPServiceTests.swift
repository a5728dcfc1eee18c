import Dispatch
import Foundation
import JobConfig
import JobDashboard
import JobHTTP
import JobMetrics
import JobStore
import JobStoreSQLite
import JobValues
import Synchronization
import TestSupport
import Testing

/// A dashboard over an empty fixed world: what the routing tests need.
func emptyDashboard() throws -> (Dashboard, TemporaryFolder) {
    let folder = try TemporaryFolder()
    let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
    let source = StoreDashboardSource(store: store) {
        DashboardSnapshot(
            pools: [PoolRow(name: "default", capacity: 4, running: 0)], build: BuildInfo(version: "t", node: "n"))
    }
    return (Dashboard(source: source), folder)
}

@Suite struct HTTPServiceTests {
    @Test func servesTheDashboardMetricsAndHealth() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        let prometheus = PrometheusJobMetrics(version: "9.9.9")
        prometheus.metrics.processStarted()
        try await withHTTPService(dashboard: dashboard, prometheus: prometheus) { address in
            let page = try await RawHTTP.get("/", address)
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
            #expect(page.headers["x-content-type-options"] == "nosniff")
            #expect(String(decoding: page.body, as: UTF8.self).contains("<h2>Jobs</h2>"))

            let metrics = try await RawHTTP.get("/metrics", address)
            #expect(metrics.status == 200)
            #expect(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("jobd_processes_started_total 1"))
            #expect(text.contains(#"jobd_build_info{version="9.9.9"} 1"#))

            #expect(try await RawHTTP.get("/healthz", address).body == Data("ok\n".utf8))
            #expect(try await RawHTTP.get("/schedules", address).status == 200)
            #expect(try await RawHTTP.get("/jobs/1", address).status == 404)
            #expect(try await RawHTTP.get("/?state=nonsense", address).status == 400)
        }
    }

    @Test func headIsGetWithoutTheBody() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            let get = try await RawHTTP.get("/", address)
            let head = try await RawHTTP.get("/", address, method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["content-length"] == String(get.body.count))
        }
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
    func otherMethodsAre405(_ method: String) async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            let reply = try await RawHTTP.get("/", address, method: method)
            #expect(reply.status == 405)
            #expect(reply.headers["allow"] == "GET, HEAD")
        }
    }

    @Test func unknownPathsAre404AndNoFileIsServed() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            for path in [
                "/etc/passwd", "/../../etc/passwd", "/jobs", "/jobs/", "/jobs/1/stages", "/metrics/x", "/favicon.ico",
                "/%2e%2e/etc/passwd",
            ] {
                let status = try await RawHTTP.get(path, address).status
                #expect(status == 404, "\(path)")
            }
        }
    }

    @Test func requestsAreBounded() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            let withBody = try await RawHTTP.send(
                "GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", to: address)
            #expect(withBody.status == 413)
            let chunked = try await RawHTTP.send(
                "GET /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                to: address)
            #expect(chunked.status == 413, "a chunked body is a body too")
            let longTarget = try await RawHTTP.get("/?definition=" + String(repeating: "a", count: 5000), address)
            #expect(longTarget.status == 414)
            // A header over the decoder's limit: the connection is refused with 431 or closed.
            let huge =
                "GET / HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "b", count: 64 * 1024))\r\nConnection: close\r\n\r\n"
            let reply = try? await RawHTTP.send(huge, to: address)
            #expect(reply == nil || reply.map { $0.status >= 400 } == true)
            // And the service still answers.
            #expect(try await RawHTTP.get("/healthz", address).status == 200)
        }
    }

    @Test func listensOnAUnixSocketWithMode0660AndReplacesAStaleOne() async throws {
        let (dashboard, folder) = try emptyDashboard()
        let path = folder.file("http.sock")
        // A stale socket file, as a jobd that was killed leaves it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(stale)
        #expect(bound == 0)
        #expect(FileManager.default.fileExists(atPath: path))

        try await withHTTPService(address: .unix(path: path), dashboard: dashboard) { address in
            #expect(address == .unix(path: path))
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o660)
            #expect(try await RawHTTP.get("/healthz", address).status == 200)
        }
        #expect(!FileManager.default.fileExists(atPath: path), "the socket is removed when the service stops")
    }

    /// The longest path `http.listen` accepts is one the listener can bind.
    @Test func listensOnAUnixSocketPathOfTheLongestLengthAccepted() async throws {
        let (dashboard, folder) = try emptyDashboard()
        let prefix = folder.file("s")
        let padding = HTTPListenAddress.maxUnixPathBytes - prefix.utf8.count - ".sock".utf8.count
        try #require(padding > 0)
        let path = prefix + String(repeating: "x", count: padding) + ".sock"
        let address = try HTTPListenAddress.parse("unix:" + path)
        let status = try await withHTTPService(address: address, dashboard: dashboard) { bound in
            try await RawHTTP.get("/healthz", bound).status
        }
        #expect(status == 200)
    }

    @Test func refusesToTakeOverALiveSocketOrAnotherFile() async throws {
        let (dashboard, folder) = try emptyDashboard()
        let path = folder.file("http.sock")
        try await withHTTPService(address: .unix(path: path), dashboard: dashboard) { _ in
            await #expect(throws: HTTPServiceError.self) {
                try await withHTTPService(address: .unix(path: path), dashboard: dashboard) { _ in }
            }
        }
        let file = folder.file("not-a-socket")
        _ = FileManager.default.createFile(atPath: file, contents: Data("keep me".utf8))
        await #expect(throws: HTTPServiceError.self) {
            try await withHTTPService(address: .unix(path: file), dashboard: dashboard) { _ in }
        }
        #expect(FileManager.default.contents(atPath: file) == Data("keep me".utf8))
    }

    /// Pages are rendered on the dashboard's own queue: while it is held,
    /// more page requests than Swift's cooperative pool has threads wait
    /// there or for a turn, and `/metrics` and `/healthz` are answered meanwhile.
    @Test func pagesBeingRenderedHoldUpNeitherMetricsNorHealth() async throws {
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let asked = Mutex(0)
        let source = StoreDashboardSource(store: store) {
            asked.withLock { $0 += 1 }
            return DashboardSnapshot(pools: [], build: BuildInfo(version: "t", node: "n"))
        }
        let queue = DispatchQueue(label: "test.render")
        let release = DispatchSemaphore(value: 0)
        queue.async { release.wait() }
        let pageCount = ProcessInfo.processInfo.activeProcessorCount + 2
        try await withHTTPService(dashboard: Dashboard(source: source, renderQueue: queue)) { address in
            let pages = (0..<pageCount).map { _ in Task { try await RawHTTP.get("/", address) } }
            // The pages given a turn have read their data and wait for the
            // renderer; the others wait for a turn.
            let reading = min(pageCount, Dashboard.concurrentPages)
            let deadline = ContinuousClock.now + .seconds(60)
            while asked.withLock({ $0 }) < reading, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(asked.withLock { $0 } == reading)
            #expect(try await RawHTTP.get("/healthz", address).status == 200)
            #expect(try await RawHTTP.get("/metrics", address).status == 200)
            let answered = Answered()
            for page in pages {
                Task {
                    _ = try? await page.value
                    answered.count.withLock { $0 += 1 }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(answered.count.withLock { $0 } == 0, "no page is answered while the renderer is held")
            release.signal()
            for page in pages {
                #expect(try await page.value.status == 200)
            }
        }
        try await store.close()
    }
}

/// Pages answered so far.
private final class Answered: Sendable {
    let count = Mutex(0)
}
