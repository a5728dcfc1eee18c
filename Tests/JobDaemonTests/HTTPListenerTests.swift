import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// jobd's HTTP listener (`http: { listen: … }`): the dashboard in a real
/// browser, a unix socket, and the ways it cannot listen.
@Suite struct HTTPListenerTests {
    static let definitions = [
        "greet": "pipeline:\n  - then: echo\n    run: [cat]\n  - map: shout\n    transform: upper\n",
        "fails": "pipeline:\n  - then: exit-3\n    shell: 'echo \"<b>broken</b> on stderr\" >&2; exit 3'\n",
    ]

    @Test func theDashboardOfJobdShowsTheLatestJobsAndAJobsStagesInChromium() async throws {
        try requireTool(ChromiumBrowser.path, package: "chromium")
        let daemon = try HTTPDaemon(definitions: Self.definitions)
        let harness = daemon.harness
        let store = try await daemon.start()
        let greet = try await harness.submit("greet", input: "<script>alert(1)</script>", to: store)
        let fails = try await harness.submit("fails", to: store)
        for id in [greet, fails] { _ = try await harness.resolved(id, in: store) }
        let base = daemon.endpoint.baseURL
        let page = try await ChromiumBrowser.shared().newPage()
        func dom(_ path: String) async throws -> String {
            try await page.open(base + path)
            return try await page.html()
        }

        let list = try await dom("/")
        // The newest job first, both linked, with their definitions and states.
        let newest = try #require(list.range(of: "href=\"jobs/\(fails)\""))
        let older = try #require(list.range(of: "href=\"jobs/\(greet)\""))
        #expect(newest.lowerBound < older.lowerBound)
        for text in ["greet", "fails", ">fulfilled<", ">rejected<", "exited with status 3"] {
            #expect(list.contains(text), "\(text)")
        }
        // This jobd's pool against its cap, and the chart of the last hour.
        #expect(list.contains("Pools: running / cap"))
        #expect(list.contains("0 / 16"))
        #expect(list.contains("Resolved per minute, last hour"))
        #expect(list.occurrences(of: "<rect class=\"s-") >= 2, "a bar for each state resolved this minute")

        // A job's page: its stages on the timeline and each with its value; the input as text.
        let job = try await dom("/jobs/\(greet)")
        for stage in ["echo", "shout"] { #expect(job.contains(stage), "\(stage)") }
        #expect(job.occurrences(of: "<rect class=\"s-fulfilled") >= 2)
        #expect(job.contains("&lt;SCRIPT&gt;ALERT(1)&lt;/SCRIPT&gt;"))
        #expect(!job.lowercased().contains("<script"), "a script element from a job's value")
        let failed = try await dom("/jobs/\(fails)")
        #expect(failed.contains("&lt;b&gt;broken&lt;/b&gt; on stderr"))
        #expect(!failed.contains("<b>broken"))

        // No schedules yet: the page says so.
        let schedules = try await dom("/schedules")
        #expect(schedules.contains("No definition has a schedule."))

        try await daemon.stop(closing: store)
    }

    @Test func aUnixSocketServesTheMetricsAndTheDashboard() async throws {
        // Relative to jobd.yaml's folder, like every path in it.
        let daemon = try HTTPDaemon(listen: "unix:state/http.sock", definitions: Self.definitions)
        let harness = daemon.harness
        let store = try await daemon.start()
        guard case .unix(let path) = daemon.endpoint else { throw TestFailure("not a unix socket") }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.type] as? FileAttributeType == .typeSocket)
        #expect(attributes[.posixPermissions] as? Int == 0o660)
        #expect(harness.log.contains("HTTP: /metrics and the dashboard on unix:\(path)"), "\(harness.log)")

        _ = try await harness.resolved(try await harness.submit("greet", input: "hi", to: store), in: store)
        let families = try await daemon.scrape()
        #expect(families.resolved == [["definition": "greet", "state": "fulfilled"]: 1])
        let page = try await RawHTTP.get("/", daemon.endpoint)
        #expect(page.status == 200)
        #expect(String(decoding: page.body, as: UTF8.self).contains("href=\"jobs/1\""))

        try await daemon.stop(closing: store)
        #expect(!FileManager.default.fileExists(atPath: path), "the socket is removed when jobd stops")
    }

    /// jobd stops within its drain bound (shutdown-grace + kill-grace + 3 s)
    /// however many pages are asked for when it is told to stop: the ones
    /// waiting for a turn are answered 503 at once (RenderGateTests), a
    /// page being made is bounded (JobPageReadTests, SizeTests).
    @Test func pagesQueuedAtSIGTERMHoldUpNoStop() async throws {
        let daemon = try HTTPDaemon(
            yaml: "node: web-7\nshutdown-grace: 1s\nkill-grace: 1s\nstore: { value-cap: 8MiB }",
            definitions: ["big": "pipeline:\n  - then: lines\n    shell: 'yes abcdefghij | head -c 4000000'\n"])
        let harness = daemon.harness
        let store = try await daemon.start()
        let id = try await harness.submit("big", to: store)
        // 4 MB through a debug jobd: seconds alone, far more with the whole suite running.
        #expect(try await harness.resolved(id, in: store, within: .seconds(120)).job.state == .fulfilled)
        try await store.close()
        // The footer names the node as jobd.yaml does, not the lease owner (node/pid/tag).
        let list = String(decoding: try await RawHTTP.get("/", daemon.endpoint).body, as: UTF8.self)
        #expect(list.contains("node web-7"), "\(list.suffix(600))")
        #expect(!list.contains("web-7/"), "\(list.suffix(600))")
        let pages = (0..<40).map { _ in Task { try? await RawHTTP.get("/jobs/\(id)", daemon.endpoint) } }
        // The first pages are being made, the rest wait.
        try await Task.sleep(for: .seconds(1))
        let stoppedAt = ContinuousClock.now
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus(within: .seconds(120)) == 0, "\(harness.log)")
        let took = ContinuousClock.now - stoppedAt
        #expect(took < .seconds(5), "jobd took \(took) to stop with 40 pages asked for")
        // Each was answered: a page, a 503 (busy, stopping, or over the
        // per-address cap), or its connection closed when the listener stopped.
        for page in pages { _ = await page.value }
    }

    /// Line 7 of the harness's jobd.yaml is `http: { listen: "…" }`; the
    /// address starts at column 17.
    @Test(arguments: [
        ("::1:9464", "looks like an IPv6 address without brackets; write [::1]:9464"),
        ("example.com:9464", "'example.com' is not an IP address"),
        ("127.0.0.1:99999", "'99999' is not a port"),
        ("unix:", "names no path"),
        ("http://127.0.0.1:9464", "is a URL; give the address alone: 127.0.0.1:9464"),
    ])
    func aBadAddressIsAConfigErrorWithFileLineAndColumn(_ address: String, _ message: String) async throws {
        let daemon = try HTTPDaemon(listen: address, definitions: Self.definitions)
        let config = daemon.harness.configPath
        let expected = "\(config):7:17: error: http.listen '\(address)' \(message)"

        let check = try await runCommand(jobdPath, ["--check", "--config", config])
        #expect(check.status == 1)
        #expect(check.output.contains(expected), "jobd --check: \(check.output)")
        let validate = try await runCommand(builtProduct("jobctl"), ["validate", "--config", config])
        #expect(validate.status == 65)
        #expect((validate.output + validate.error).contains(expected), "jobctl validate: \(validate)")
        let start = try await runCommand(jobdPath, ["--config", config])
        #expect(start.status == 78)
        #expect(start.error.contains(expected), "jobd: \(start.error)")
        #expect(!FileManager.default.fileExists(atPath: daemon.harness.databasePath))
    }

    @Test func aListenerThatCannotListenStopsJobdWithExit69() async throws {
        // Another process holds the port.
        let port = try freePort()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(holder, 1) == 0)

        let daemon = try HTTPDaemon(listen: "127.0.0.1:\(port)", definitions: Self.definitions)
        try daemon.harness.start()
        #expect(await daemon.harness.exitStatus() == 69)
        let log = daemon.harness.log
        #expect(
            log.contains(
                "http: cannot listen on 127.0.0.1:\(port): Address already in use; another process listens there"),
            "\(log)")
        let told = log.split(separator: "\n").filter {
            $0.contains("Address already in use") && !$0.contains(" debug ")
        }
        #expect(told.count == 1, "said once: \(log)")
        #expect(!log.contains(" ready (pid "), "never ready without the listener: \(log)")
        #expect(!daemon.harness.notify.all.contains { $0["READY"] == "1" })
    }
}
