import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real jobd with `http: { listen: … }` (a free loopback port unless
/// told otherwise), and what the tests read from it: the exposition over
/// HTTP and through `jobctl metrics`, and the database through sqlite3.
struct HTTPDaemon {
    let harness: DaemonHarness
    let endpoint: HTTPEndpoint

    /// - Parameters:
    ///   - listen: the `http.listen` value; nil: `127.0.0.1:` a free port.
    ///   - yaml: more jobd.yaml lines (pools, …).
    init(listen: String? = nil, yaml: String = "", definitions: [String: String]) throws {
        let address: String
        if let listen {
            address = listen
        } else {
            address = "127.0.0.1:\(try freePort())"
        }
        harness = try DaemonHarness(yaml: "http: { listen: \"\(address)\" }\n\(yaml)", definitions: definitions)
        if address.hasPrefix("unix:") {
            let path = String(address.dropFirst("unix:".count))
            endpoint = .unix(path: path.hasPrefix("/") ? path : harness.folder + "/" + path)
        } else {
            let port = Int(address.split(separator: ":").last ?? "") ?? 0
            endpoint = .tcp(host: "127.0.0.1", port: port)
        }
    }

    /// Starts jobd, waits until it is ready and its listener listens, and
    /// opens its database, as jobctl does.
    @discardableResult
    func start() async throws -> SQLiteJobStore {
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        try #require(await harness.waitForLog("HTTP: /metrics and the dashboard on"), "no listener: \(harness.log)")
        return try harness.openStore()
    }

    /// Closes `store`, then SIGTERM; jobd must exit 0.
    func stop(closing store: SQLiteJobStore) async throws {
        try await store.close()
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }

    /// `jobctl submit NAME --input INPUT`: the new job's id.
    func jobctlSubmit(_ name: String, input: String) async throws -> Int64 {
        let result = try await runCommand(
            builtProduct("jobctl"), ["submit", name, "--input", input, "--config", harness.configPath])
        guard result.status == 0, let id = Int64(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("jobctl submit \(name): exit \(result.status): \(result.error)")
        }
        return id
    }

    // MARK: The exposition

    /// `GET /metrics`, read by prometheus_client's strict parser.
    func scrape() async throws -> [String: PrometheusClientParser.Family] {
        let reply = try await RawHTTP.get("/metrics", endpoint)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        return try await PrometheusClientParser.parse(Array(reply.body))
    }

    /// `jobctl metrics`, read by the same parser.
    func jobctlMetrics() async throws -> [String: PrometheusClientParser.Family] {
        let result = try await runCommand(builtProduct("jobctl"), ["metrics", "--config", harness.configPath])
        #expect(result.status == 0, "jobctl metrics: \(result.error)")
        return try await PrometheusClientParser.parse(Array(result.output.utf8))
    }

    // MARK: The database, as an operator reads it

    /// Rows of `sql`, run by the sqlite3 shell on jobd's database; columns split at `|`.
    func database(_ sql: String) async throws -> [[String]] {
        try requireTool("/usr/bin/sqlite3", package: "sqlite3")
        let result = try await runCommand("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", harness.databasePath, sql])
        guard result.status == 0 else { throw TestFailure("sqlite3: \(result.error)") }
        return result.output.split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// Resolved jobs by definition and state, as the database counts them.
    func resolvedInDatabase() async throws -> [[String: String]: Double] {
        var counts: [[String: String]: Double] = [:]
        let rows = try await database(
            """
            SELECT definition, state, count(*) FROM jobs WHERE state IN ('fulfilled', 'rejected', 'cancelled')
            GROUP BY definition, state
            """)
        for row in rows { counts[["definition": row[0], "state": row[1]]] = Double(row[2]) }
        return counts
    }

    /// Stage attempts that started, by definition (from `stages.attempts`).
    func attemptsInDatabase() async throws -> [String: Double] {
        var attempts: [String: Double] = [:]
        let rows = try await database(
            """
            SELECT j.definition, sum(s.attempts) FROM stages s JOIN jobs j ON j.id = s.job_id
            WHERE s.started_at IS NOT NULL GROUP BY j.definition
            """)
        for row in rows { attempts[row[0]] = Double(row[1]) }
        return attempts
    }
}

extension [String: PrometheusClientParser.Family] {
    /// `jobd_jobs_resolved_total`'s series: by their labels (definition, state).
    var resolved: [[String: String]: Double] {
        [[String: String]: Double](
            samples(named: "jobd_jobs_resolved_total").map { ($0.labels, $0.value) }, uniquingKeysWith: +)
    }
}
