// postgres-bench: three-stage jobs, every stage persisted, through two
// PostgresJobStores (two engines' worth of concurrency) against a plain
// pgbench loop of the same writes, on the same server in the same run.
//
//   Benchmarks/postgres-bench/run            (starts a throwaway server, builds, runs this)
//   postgres-bench --socket DIR --port N [--jobs J] [--workers W]
//
// Each side drains the same number of queued jobs (default 16,000); its
// figure is jobs per second.
//
// Prints both figures and exits 1 when the store does less than twice the
// plain loop's jobs per second.
import Foundation
@_spi(Maintenance) import JobStore
import Synchronization

struct Options {
    var socket = "/run/postgresql"
    var port = 5432
    var jobs = 16_000
    /// Jobs in flight per store (an engine's pool slots).
    var workers = 32
    var pgbench = "/usr/lib/postgresql/15/bin/pgbench"

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            let value = iterator.next() ?? ""
            switch argument {
            case "--socket": socket = value
            case "--port": port = Int(value) ?? port
            case "--jobs": jobs = max(16, (Int(value) ?? jobs) / 16 * 16)
            case "--workers": workers = Int(value) ?? workers
            case "--pgbench": pgbench = value
            default: fatalError("unknown option \(argument)")
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let stages = [StagePlan(name: "fetch", kind: "then"), StagePlan(name: "total", kind: "map"), StagePlan(name: "publish", kind: "done")]

func configuration(schema: String) -> PostgresStoreConfiguration {
    var configuration = PostgresStoreConfiguration(
        endpoint: .unixSocket(path: "\(options.socket)/.s.PGSQL.\(options.port)"), user: "postgres", password: nil,
        database: "postgres", schema: schema)
    configuration.maxConnections = 4
    return configuration
}

/// Submits `count` three-stage jobs, in batches.
func fill(_ store: PostgresJobStore, _ count: Int) async throws {
    var left = count
    while left > 0 {
        let batch = min(left, 1000)
        _ = try await store.submit((0..<batch).map { NewJob(definition: "bench", input: Data("in \($0)".utf8), stages: stages) })
        left -= batch
    }
}

/// The plain loop: pgbench, 16 clients, each transaction claiming one job
/// with SKIP LOCKED, writing its three stages and finishing it, until every
/// job is done (each client runs jobs/16 transactions).
func plainLoop() async throws -> Double {
    let script = """
        BEGIN;
        WITH picked AS (SELECT id FROM plain.jobs WHERE state = 'pending' AND pool = 'default' AND run_at <= now()
                        ORDER BY priority DESC, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        UPDATE plain.jobs SET state = 'running', lease_owner = 'pgbench', lease_expires_at = now() + interval '30 s',
            claims = claims + 1, started_at = now()
        FROM picked WHERE jobs.id = picked.id RETURNING jobs.id AS job \\gset
        UPDATE plain.stages SET state = 'fulfilled', value = 'value 0', attempts = 1, finished_at = now() WHERE job_id = :job AND position = 0;
        UPDATE plain.stages SET state = 'fulfilled', value = 'value 1', attempts = 1, finished_at = now() WHERE job_id = :job AND position = 1;
        UPDATE plain.stages SET state = 'fulfilled', value = 'value 2', attempts = 1, finished_at = now() WHERE job_id = :job AND position = 2;
        UPDATE plain.jobs SET state = 'fulfilled', result = 'value 2', finished_at = now(), lease_expires_at = NULL WHERE id = :job;
        COMMIT;

        """
    let file = NSTemporaryDirectory() + "postgres-bench-\(getpid()).sql"
    try script.write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let output = NSTemporaryDirectory() + "postgres-bench-\(getpid()).out"
    defer { try? FileManager.default.removeItem(atPath: output) }
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: options.pgbench)
    process.arguments = ["-n", "-h", options.socket, "-p", "\(options.port)", "-U", "postgres", "-c", "16", "-j", "2",
                         "-t", "\(options.jobs / 16)", "-f", file, "postgres"]
    process.standardOutput = FileHandle(forWritingAtPath: output)
    process.standardError = process.standardOutput
    try process.run()
    process.waitUntilExit()
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    guard process.terminationStatus == 0,
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
          let tps = Double(line.dropFirst(6).prefix { $0 != " " })
    else { throw BenchError("pgbench failed: \(text)") }
    return tps
}

/// Two stores, `workers` jobs in flight each: claim, three stage results
/// (each committed before the next stage starts), finish; until no job is left.
func storeLoop(_ stores: [PostgresJobStore]) async throws -> (jobs: Double, transactions: Int, writes: Int) {
    let start = ContinuousClock.now
    let done = try await withThrowingTaskGroup(of: Int.self) { group in
        for (index, store) in stores.enumerated() {
            for worker in 0..<options.workers {
                group.addTask {
                    var count = 0
                    let owner = "engine-\(index)-\(worker)"
                    while true {
                        guard let claimed = try await store.claim(pool: "default", owner: owner, limit: 1, leaseDuration: .seconds(30)).first
                        else { break }
                        for position in 0..<3 {
                            try await store.recordStageResult(StageResult(
                                lease: claimed.lease, position: position, outcome: .fulfilled(Data("value \(position)".utf8)),
                                exitCode: 0, startedAt: Date()))
                        }
                        try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(Data("value 2".utf8))))
                        count += 1
                    }
                    return count
                }
            }
        }
        return try await group.reduce(0, +)
    }
    guard done == options.jobs else { throw BenchError("the stores ran \(done) jobs of \(options.jobs)") }
    let elapsed = ContinuousClock.now - start
    let statistics = stores.map(\.writerStatistics)
    return (Double(done) / elapsed.timeInterval, statistics.map(\.transactions).reduce(0, +), statistics.map(\.writes).reduce(0, +))
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

// MARK: Run

/// Both figures, each on its own schema holding the same number of jobs.
func measure() async throws -> (plain: Double, store: (jobs: Double, transactions: Int, writes: Int)) {
    let jobs = options.jobs
    let plain = try await PostgresJobStore.withStore(configuration(schema: "plain")) { store in
        try await fill(store, jobs)
        return try await plainLoop()
    }
    let measured = try await PostgresJobStore.withStore(configuration(schema: "bench")) { first in
        try await fill(first, jobs)
        return try await PostgresJobStore.withStore(configuration(schema: "bench")) { second in
            try await storeLoop([first, second])
        }
    }
    return (plain, measured)
}

let (plain, measured) = try await measure()
let ratio = measured.jobs / plain
print(String(format: "plain pgbench loop (16 clients, claim + 3 stage writes + finish in one transaction): %.0f jobs/s", plain))
print(String(format: "PostgresJobStore, 2 stores × %d jobs in flight, every write awaited: %.0f jobs/s (%.1f writes per transaction)",
             options.workers, measured.jobs, Double(measured.writes) / Double(max(measured.transactions, 1))))
print(String(format: "ratio %.2f× (target ≥ 2×): %@", ratio, ratio >= 2 ? "met" : "NOT MET"))
exit(ratio >= 2 ? 0 : 1)
