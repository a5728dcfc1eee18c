// jobd-bench: the daemon as an operator sees it, on this machine; each
// figure beside its bound (Thresholds.swift), exit 1 when one misses.
//
//     swift build -c release --product jobd && swift run -c release jobd-bench [--quick] [--jobs N] [--pending N]
//                                                                               [--idle SECONDS] [--tsv FILE]
//
// Starts the release `jobd` binary (built beside this one) on a fresh
// folder, then measures:
// a. submit-to-start latency on an idle jobd: a job is written to SQLite
//    and jobd nudged over its socket, as `jobctl submit` does; the time
//    until jobd records the job's `started_at`. One job at a time, jobd
//    idle in between.
// b. an idle jobd's CPU time and resident memory, with an empty queue and
//    with 100,000 and 200,000 delayed (pending) jobs in the database: no
//    CPU use to speak of; memory flat.

import BenchmarkSupport
import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobStoreSQLite
import Spawn

#if canImport(Glibc)
import Glibc
#endif

let arguments = BenchArguments(
    usage: "jobd-bench [--quick] [--jobs N] [--pending N] [--idle SECONDS] [--tsv FILE]",
    options: ["jobs", "pending", "idle"])
let latencyJobs = arguments.int("jobs", full: 500, quick: 300)
let pendingJobs = arguments.int("pending", full: 100_000, quick: 50_000)
let idleSeconds = arguments.int("idle", full: 10, quick: 5)
var report = Report("jobd-bench", arguments)

let jobd = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jobd")
    .path
guard FileManager.default.isExecutableFile(atPath: jobd) else {
    print("jobd-bench: no jobd binary at \(jobd); build it first: swift build -c release --product jobd")
    exit(1)
}

let folder = NSTemporaryDirectory() + "jobd-bench-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
try! FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: true)
try! """
database: jobd.sqlite
definitions: jobs.d
socket: jobd.sock
log: { level: warning }
""".write(toFile: folder + "/jobd.yaml", atomically: true, encoding: .utf8)
let tickYAML = "pipeline:\n  - map: tidy\n    transform: trim\n"
try! tickYAML.write(toFile: folder + "/jobs.d/tick.yaml", atomically: true, encoding: .utf8)
let tick = try! DefinitionLoader().parse(yaml: tickYAML, path: folder + "/jobs.d/tick.yaml").get()

print("jobd-bench: \(jobd); folder \(folder); \(Machine.summary)")

// Its warnings and errors show on the bench's own stderr.
let daemon = try! SpawnedProcess(jobd, ["--config", folder + "/jobd.yaml"], stdout: .inherit, stderr: .inherit)
let socket = folder + "/jobd.sock"
let startDeadline = Date() + 30
while (try? ControlClient.status(socketPath: socket)) == nil {
    guard Date() < startDeadline, daemon.isRunning else {
        print("jobd did not start")
        daemon.signal(SIGTERM)
        try? FileManager.default.removeItem(atPath: folder)
        exit(1)
    }
    usleep(10_000)
}
let pid = daemon.pid

let store = try! SQLiteJobStore(SQLiteJobStoreConfiguration(path: folder + "/jobd.sqlite", checkpointInterval: nil))

// MARK: a. Submit-to-start latency

print("\na. submit-to-start latency, \(latencyJobs) jobs one at a time on an idle jobd")
var latencies: [Double] = []
for _ in 0..<latencyJobs {
    let before = Date()
    let id = blocking { try await store.submit(tick.newJob(input: Data("  x  ".utf8))).id }
    _ = try? ControlClient.send(ControlRequest(.nudge), to: socket)
    // Wait for the job to end, then measure from the row: started_at is
    // written by jobd when it claims the job (millisecond timestamps).
    var detail: JobDetail?
    while true {
        detail = blocking { try await store.job(id) }
        if detail?.job.state.isResolved == true { break }
        usleep(500)
    }
    let started = detail!.job.startedAt!
    latencies.append(max(0, started.timeIntervalSince(before)) * 1000)
    usleep(20_000)  // idle again before the next one
}
// started_at has millisecond resolution: figures are within 1 ms.
report.add(
    "a. submit-to-start latency, p50", percentile(latencies, 0.5), unit: "ms", .atMost(Thresholds.latencyP50),
    note: "\(latencyJobs) jobs one at a time; within 1 ms (started_at is in ms)")
report.add("a. submit-to-start latency, p90", percentile(latencies, 0.9), unit: "ms")
report.add(
    "a. submit-to-start latency, p99", percentile(latencies, 0.99), unit: "ms", .atMost(Thresholds.latencyP99),
    note: "target: ≤ 20 ms on an idle machine; max \(Report.format(latencies.max()!, 1)) ms")

// MARK: b. Idle CPU and memory

/// Settles, then measures jobd idle for `idleSeconds`: CPU share of a
/// core, resident bytes.
func idleFigures(_ label: String) -> (cpuPercent: Double, resident: Int) {
    sleep(3)  // let the last work settle
    let cpuBefore = Machine.cpuSeconds(of: pid)
    let watch = Stopwatch()
    sleep(UInt32(idleSeconds))
    let cpuPercent = (Machine.cpuSeconds(of: pid) - cpuBefore) / watch.elapsedSeconds * 100
    let resident = Machine.residentBytes(of: pid)
    print(
        "  \(label): \(Report.format(cpuPercent, 2))% of a core, resident \(mib(resident)) (\(Machine.residentParts(of: pid)))"
    )
    return (cpuPercent, resident)
}
func mib(_ bytes: Int) -> String { Report.format(mebibytes(bytes), 1) + " MiB" }

print("\nb. an idle jobd, \(idleSeconds) s each")
let empty = idleFigures("empty queue")
// Delayed by a day: pending, never runnable during the bench. Twice, so
// that what grows with the number of jobs shows apart from SQLite's page
// caches, which fill once and stay.
let later = Date() + 86_400
var idle: [(cpuPercent: Double, resident: Int)] = []
for round in 1...2 {
    var left = pendingJobs
    while left > 0 {
        let batch = min(left, 1000)
        blocking {
            _ = try await store.submit((0..<batch).map { _ in tick.newJob(input: Data("later".utf8), runAt: later) })
        }
        left -= batch
    }
    _ = try? ControlClient.send(ControlRequest(.nudge), to: socket)
    idle.append(idleFigures("\(Report.format(Double(round * pendingJobs), 0)) pending"))
}
let counts = (Report.format(Double(pendingJobs), 0), Report.format(Double(2 * pendingJobs), 0))
report.add(
    "b. idle CPU, empty queue", empty.cpuPercent, unit: "% of a core", .atMost(Thresholds.idleCPUPercent),
    note: "over \(idleSeconds) s", digits: 2)
report.add(
    "b. idle CPU, \(counts.1) pending", idle[1].cpuPercent, unit: "% of a core", .atMost(Thresholds.idleCPUPercent),
    note: "over \(idleSeconds) s", digits: 2)
// From N to 2N: the step from empty is SQLite's page caches filling
// (bounded by cache_size per connection); what still grows is per job.
report.add(
    "b. resident memory per pending job, \(counts.0) → \(counts.1) pending",
    Double(idle[1].resident - idle[0].resident) / Double(pendingJobs), unit: "bytes",
    .atMost(Thresholds.residentBytesPerPendingJob),
    note: "empty \(mib(empty.resident)), then \(mib(idle[0].resident)), \(mib(idle[1].resident))")

daemon.signal(SIGTERM)
report.add("jobd's exit status after SIGTERM", Double(daemon.wait().status), unit: "", .atMost(0), digits: 0)
try? FileManager.default.removeItem(atPath: folder)
report.finish()
