// postgres-bench: the several-host figures, on a throwaway PostgreSQL 15 (fsync
// on) that Benchmarks/postgres-bench/run starts and removes:
//
//   Benchmarks/postgres-bench/run [--quick] [--jobs N] [--workers W] [--latency-jobs N] [--tsv FILE]
//
// a. Throughput: N queued three-stage jobs drained by a plain pgbench loop
//    (16 clients; a transaction claims a job with SKIP LOCKED, writes its
//    three stages and finishes it), then N more by two real jobd processes
//    (nodes bench-a and bench-b, pool of W each) running the same pipeline
//    in process (three `map` transforms, every stage result committed
//    before the next stage starts). Each figure is jobs per second; the
//    jobds' is N over the time from the first start to the last finish
//    (the database's own timestamps). Target: jobds ≥ 2× the plain loop.
// b. Latency: a job submitted from a host without a jobd (a store of its
//    own, as jobctl there does: no socket to nudge) starts on one of the
//    idle jobds; the time from the submit to the job's started_at, one job
//    at a time. Targets: p50 ≤ 10 ms, p99 ≤ 50 ms.
// c. Join across hosts: a parent whose `each` stage starts 10 in-process
//    children, one parent at a time, the children spread over both
//    jobds; the time from the last child's finished_at to the parent's
//    stage settled (its finished_at), whichever host ran either. Target:
//    p50 ≤ 50 ms.
// d. Limits: N jobs of the same pipeline with concurrency limits that never
//    bind (global and per key, a key per job: its input), drained by the
//    two jobds, against N without limits in the same run (alternating,
//    the jobds restarted before each drain so that each starts on a full
//    queue). Every claim of a limited definition takes the pool's advisory
//    lock and counts the running jobs. Target: ≥ 90 % of the rate without.
import BenchmarkSupport
import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
@_spi(Maintenance) import JobStoreSQLite
import JobValues

let arguments = BenchArguments(
    usage: "postgres-bench --socket DIR --port N [--quick] [--jobs N] [--workers W] [--latency-jobs N] [--tsv FILE]",
    options: ["socket", "port", "jobs", "workers", "latency-jobs", "joins", "pgbench"])
let socket = arguments.string("socket") ?? "/run/postgresql"
let port = arguments.int("port", full: 5432)
let jobs = max(16, arguments.int("jobs", full: 16_000, quick: 6_000) / 16 * 16)
let workers = arguments.int("workers", full: 128)
let latencyJobs = arguments.int("latency-jobs", full: 500, quick: 200)
let joins = arguments.int("joins", full: 100, quick: 40)
let pgbench = arguments.string("pgbench") ?? "/usr/lib/postgresql/15/bin/pgbench"
var report = Report("postgres-bench", arguments)

let jobd = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jobd")
    .path
guard FileManager.default.isExecutableFile(atPath: jobd) else {
    print("postgres-bench: no jobd binary at \(jobd); build it first: swift build -c release --product jobd")
    exit(1)
}
print("postgres-bench: \(jobd); PostgreSQL at \(socket) port \(port); \(Machine.summary)")

func configuration(schema: String) -> PostgresJobStoreConfiguration {
    var configuration = PostgresJobStoreConfiguration(
        endpoint: .unixSocket(path: "\(socket)/.s.PGSQL.\(port)"), user: "postgres", password: nil,
        database: "postgres", schema: schema)
    configuration.maxConnections = 4
    return configuration
}

let stages = [
    StagePlan(name: "tidy", kind: "map"), StagePlan(name: "shout", kind: "map"), StagePlan(name: "hush", kind: "map"),
]
let pipeline = """
    pipeline:
      - map: tidy
        transform: trim
      - map: shout
        transform: upper
      - map: hush
        transform: lower
    """

/// Child jobs (c.): a parent whose `each` stage starts one `fan-child` per line.
let fanParent = """
    pipeline:
      - each: children
        definition: fan-child
    """
let fanStage = StagePlan(name: "children", kind: "each")
let fanChild = """
    pipeline:
      - map: upper
        transform: upper
    """

/// The pipeline with limits that never bind.
let limitedPipeline = pipeline + "\nlimit: { global: 1000000, per-key: 1000, key: input }"

/// Queues `count` three-stage jobs of `definition`, in batches; with
/// `keyed`, each with its input as its limit key, as a submit of the
/// limited definition stores it.
func fill(_ store: PostgresJobStore, _ count: Int, definition: String = "bench", keyed: Bool = false) async throws {
    var left = count
    while left > 0 {
        let batch = min(left, 1000)
        _ = try await store.submit(
            (0..<batch).map { index in
                var job = NewJob(definition: definition, input: Data(" job \(left - index) ".utf8), stages: stages)
                if keyed { job.limitKey = " job \(left - index) " }
                return job
            })
        left -= batch
    }
}

// MARK: a. Throughput

print("\na. throughput, \(jobs) jobs each")
let plain = try await PostgresJobStore.withStore(configuration(schema: "plain")) { store in
    try await fill(store, jobs)
    return try plainLoop(pgbench: pgbench, socket: socket, port: port, jobs: jobs)
}
let database = "postgres://postgres@/postgres?host=\(socket)&port=\(port)&schema=bench"
let hosts = try ["bench-a", "bench-b"].map {
    try JobdProcess(
        jobd: jobd, node: $0, database: database, pool: workers,
        definitions: ["bench": pipeline, "limited": limitedPipeline, "fan": fanParent, "fan-child": fanChild])
}

/// Stops the jobds (they would keep retrying a server the run script removes) and exits.
func fail(_ error: any Error) -> Never {
    for host in hosts { _ = host.stop() }
    print("postgres-bench: \(error)")
    exit(1)
}

/// The first column of the first row, as text ("" for none or NULL).
func scalar(_ store: PostgresJobStore, _ sql: String) async throws -> String {
    (try await store.queryStrings(sql).first ?? nil) ?? ""
}

/// Stops the jobds (if running), queues the jobs, starts both jobds, waits
/// for every job to be fulfilled: the seconds from the first start to the
/// last finish, and the jobs by node.
func drainWithJobds(definition: String = "bench") async throws -> (seconds: Double, split: String) {
    try await PostgresJobStore.withStore(configuration(schema: "bench")) { store in
        for host in hosts where host.isRunning { _ = host.terminate() }
        let first = Int64(try await scalar(store, "SELECT coalesce(max(id), 0) + 1 FROM jobs")) ?? 1
        try await fill(store, jobs, definition: definition, keyed: definition == "limited")
        for host in hosts { try host.start() }
        let left = "SELECT count(*) FROM jobs WHERE id >= \(first) AND state <> 'fulfilled'"
        while Int(try await scalar(store, left)) ?? 1 > 0 {
            for host in hosts where !host.isRunning { throw BenchError("jobd \(host.node) stopped: \(host.log)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        let seconds = try await store.queryStrings(
            "SELECT extract(epoch FROM max(finished_at) - min(started_at)) FROM jobs WHERE id >= \(first)")
        let split = try await store.queryStrings(
            "SELECT split_part(lease_owner, '/', 1) || ' ' || count(*) FROM jobs WHERE id >= \(first) "
                + "GROUP BY split_part(lease_owner, '/', 1) ORDER BY 1"
        )
        return (
            Double(seconds.first.flatMap { $0 } ?? "") ?? .infinity, split.compactMap { $0 }.joined(separator: ", ")
        )
    }
}

/// One job at a time from a store of its own, the jobds idle in between:
/// milliseconds from the submit to the job's started_at.
func latencies() async throws -> [Double] {
    try await PostgresJobStore.withStore(configuration(schema: "bench")) { store in
        var latencies: [Double] = []
        try await Task.sleep(for: .seconds(1))
        for index in 0..<latencyJobs {
            let before = Date()
            let id = try await store.submit(
                NewJob(definition: "bench", input: Data(" late \(index) ".utf8), stages: stages)
            ).id
            var started: Date?
            while true {
                let job = try await store.job(id)?.job
                if let job, job.state.isResolved {
                    started = job.startedAt
                    break
                }
                try await Task.sleep(for: .microseconds(500))
            }
            latencies.append(max(0, (started ?? before).timeIntervalSince(before)) * 1000)
            try await Task.sleep(for: .milliseconds(20))
        }
        return latencies
    }
}

/// One parent at a time of 10 children: milliseconds from the last
/// child's finished_at to the parent's stage settled; and how many
/// parents settled on another host than the one that ended their last child.
func joinLatencies() async throws -> (latencies: [Double], split: String) {
    try await PostgresJobStore.withStore(configuration(schema: "bench")) { store in
        var latencies: [Double] = []
        var elsewhere = 0
        let input = Data((0..<10).map { "item \($0)" }.joined(separator: "\n").utf8)
        for _ in 0..<joins {
            let id = try await store.submit(NewJob(definition: "fan", input: input, stages: [fanStage])).id
            while try await !(store.job(id)?.job.state.isResolved ?? true) {
                try await Task.sleep(for: .microseconds(500))
            }
            let row = try await store.queryStrings(
                """
                SELECT extract(epoch FROM s.finished_at - c.finished_at) * 1000
                    || ' ' || (split_part(p.lease_owner, '/', 1) <> split_part(c.lease_owner, '/', 1))::text
                FROM jobs p JOIN stages s ON s.job_id = p.id AND s.position = 0
                JOIN LATERAL (SELECT finished_at, lease_owner FROM jobs WHERE parent_id = p.id
                              ORDER BY finished_at DESC LIMIT 1) c ON true
                WHERE p.id = \(id) AND p.state = 'fulfilled'
                """)
            let parts = (row.first ?? nil)?.split(separator: " ") ?? []
            guard parts.count == 2, let milliseconds = Double(parts[0]) else {
                throw BenchError("parent job \(id) did not fulfil: \(try await store.job(id)?.job.error ?? "gone")")
            }
            latencies.append(milliseconds)
            if parts[1] == "true" { elsewhere += 1 }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (latencies, "\(elsewhere) of \(joins) settled on another host than their last child's")
    }
}

let drained: (seconds: Double, split: String)
do { drained = try await drainWithJobds() } catch { fail(error) }
let throughput = Double(jobs) / drained.seconds
report.add(
    "a. plain pgbench loop (16 clients)", plain, unit: "jobs/s",
    note: "claim + 3 stage writes + finish, one transaction a job")
report.add(
    "a. two jobds, pool \(workers) each", throughput, unit: "jobs/s",
    note: "3 map stages, each committed before the next; jobs by node: \(drained.split)")
report.add("a. jobds ÷ plain loop", throughput / plain, unit: "×", .atLeast(Thresholds.throughputRatio), digits: 2)

// MARK: d. Limits

print("\nd. limits that never bind, \(jobs) jobs a drain, alternating with drains without")
var limitedRates: [Double] = []
var plainRates: [Double] = []
do {
    for _ in 0..<2 {
        limitedRates.append(Double(jobs) / (try await drainWithJobds(definition: "limited")).seconds)
        plainRates.append(Double(jobs) / (try await drainWithJobds()).seconds)
    }
} catch { fail(error) }
let limitedRate = limitedRates.reduce(0, +) / Double(limitedRates.count)
let plainRate = plainRates.reduce(0, +) / Double(plainRates.count)
report.add(
    "d. two jobds with limits (global, per key; not binding)", limitedRate, unit: "jobs/s",
    note: "drains: " + limitedRates.map { Report.format($0, 0) }.joined(separator: ", "))
report.add(
    "d. the same without limits", plainRate, unit: "jobs/s",
    note: "drains: " + plainRates.map { Report.format($0, 0) }.joined(separator: ", "))
report.add(
    "d. with limits ÷ without", limitedRate / plainRate * 100, unit: "%", .atLeast(Thresholds.limitsShare), digits: 0)

// MARK: b. Latency

print("\nb. submit on a host without jobd → start on another, \(latencyJobs) jobs one at a time, jobds idle")
let measured: [Double]
do { measured = try await latencies() } catch { fail(error) }
report.add(
    "b. submit → start on another host, p50", percentile(measured, 0.5), unit: "ms", .atMost(Thresholds.latencyP50),
    note: "\(latencyJobs) jobs; within 1 ms (started_at is kept in ms)")
report.add("b. submit → start on another host, p90", percentile(measured, 0.9), unit: "ms")
report.add(
    "b. submit → start on another host, p99", percentile(measured, 0.99), unit: "ms", .atMost(Thresholds.latencyP99),
    note: "max \(Report.format(measured.max() ?? 0, 1)) ms")
// MARK: c. Join across hosts

print("\nc. join after the last child ends, \(joins) parents of 10 children one at a time, over both jobds")
let joined: (latencies: [Double], split: String)
do { joined = try await joinLatencies() } catch { fail(error) }
report.add(
    "c. join after the last child ends, p50", percentile(joined.latencies, 0.5), unit: "ms",
    .atMost(Thresholds.joinP50),
    note: "p90 \(Report.format(percentile(joined.latencies, 0.9), 1)) ms; \(joined.split) (ms timestamps)")

for host in hosts {
    report.add("jobd \(host.node)'s exit status after SIGTERM", Double(host.stop()), unit: "", .atMost(0), digits: 0)
}
report.finish()
