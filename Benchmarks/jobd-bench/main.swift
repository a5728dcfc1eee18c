// jobd-bench: the daemon as an operator sees it, on this machine.
//
//     swift build -c release --product jobd && swift run -c release jobd-bench [--jobs N] [--pending N] [--idle SECONDS]
//
// Starts the release `jobd` binary (built beside this one) on a fresh
// folder, then measures:
// a. submit-to-start latency on an idle jobd: a job is written to SQLite
//    and jobd nudged over its socket, as `jobctl submit` does; the time
//    until jobd records the job's `started_at`. One job at a time, jobd
//    idle in between. Targets: p50 ≤ 5 ms, p99 ≤ 20 ms.
// b. an idle jobd's CPU time and resident memory, with an empty queue and
//    with 100,000 delayed (pending) jobs in the database. Targets: no CPU
//    use to speak of; memory flat.

import Foundation
import JobConfig
import JobControl
import JobStore

#if canImport(Glibc)
import Glibc
#endif

var settings: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()[...]
while let key = arguments.popFirst() {
    guard key.hasPrefix("--"), let value = arguments.popFirst() else {
        print("usage: jobd-bench [--jobs N] [--pending N] [--idle SECONDS]")
        exit(2)
    }
    settings[String(key.dropFirst(2))] = value
}
let latencyJobs = Int(settings["jobs"] ?? "") ?? 500
let pendingJobs = Int(settings["pending"] ?? "") ?? 100_000
let idleSeconds = Int(settings["idle"] ?? "") ?? 10

let jobd = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jobd").path
guard FileManager.default.isExecutableFile(atPath: jobd) else {
    print("jobd-bench: no jobd binary at \(jobd); build it first: swift build -c release --product jobd")
    exit(1)
}

let folder = NSTemporaryDirectory() + "jobd-bench-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
try! FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
try! """
    database: jobd.sqlite
    definitions: jobs.d
    socket: jobd.sock
    log: { level: warning }
    """.write(toFile: folder + "/jobd.yaml", atomically: true, encoding: .utf8)
let tickYAML = "pipeline:\n  - map: tidy\n    transform: trim\n"
try! tickYAML.write(toFile: folder + "/jobs.d/tick.yaml", atomically: true, encoding: .utf8)
let tick = try! DefinitionLoader().parse(yaml: tickYAML, path: folder + "/jobs.d/tick.yaml").get()

print("jobd-bench: \(jobd)")
print("folder \(folder); \(ProcessInfo.processInfo.activeProcessorCount) cores, load \(loadAverage())")

let daemon = Process()
daemon.executableURL = URL(fileURLWithPath: jobd)
daemon.arguments = ["--config", folder + "/jobd.yaml"]
try! daemon.run()
let socket = folder + "/jobd.sock"
let startDeadline = Date() + 30
while (try? ControlClient.status(socketPath: socket)) == nil {
    guard Date() < startDeadline, daemon.isRunning else {
        print("jobd did not start")
        exit(1)
    }
    usleep(10_000)
}
let pid = daemon.processIdentifier

let store = try! SQLiteJobStore(JobStoreConfiguration(path: folder + "/jobd.sqlite", checkpointInterval: nil))

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
latencies.sort()
let sorted = latencies
func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
print(String(format: "   p50 %.1f ms (target ≤ 5)   p90 %.1f ms   p99 %.1f ms (target ≤ 20)   max %.1f ms",
             percentile(0.5), percentile(0.9), percentile(0.99), sorted.last!))
print("   (started_at has millisecond resolution: figures are within 1 ms)")

// MARK: b. Idle CPU and memory

func idleFigures(_ label: String) -> (cpu: Double, rss: Int) {
    sleep(3)  // let the last work settle
    let cpuBefore = cpuSeconds(pid)
    let clockBefore = Date()
    sleep(UInt32(idleSeconds))
    let cpu = cpuSeconds(pid) - cpuBefore
    let wall = Date().timeIntervalSince(clockBefore)
    let rss = residentKiB(pid)
    print(String(format: "   %@: CPU %.3f s in %.0f s idle (%.2f%% of a core), resident %d KiB (%@)",
                 label, cpu, wall, cpu / wall * 100, rss, residentParts(pid)))
    return (cpu, rss)
}

print("\nb. an idle jobd, \(idleSeconds) s each")
let empty = idleFigures("empty queue")
// Delayed by a day: pending, never runnable during the bench. Twice, so
// that what grows with the number of jobs shows apart from SQLite's page
// caches, which fill once and stay.
let later = Date() + 86_400
var figures: [(jobs: Int, rss: Int)] = [(0, empty.rss)]
for round in 1...2 {
    var left = pendingJobs
    while left > 0 {
        let batch = min(left, 1000)
        blocking { _ = try await store.submit((0..<batch).map { _ in tick.newJob(input: Data("later".utf8), runAt: later) }) }
        left -= batch
    }
    _ = try? ControlClient.send(ControlRequest(.nudge), to: socket)
    figures.append((round * pendingJobs, idleFigures("\(round * pendingJobs) pending").rss))
}
print(String(format: "   resident: empty %d KiB, %d pending %d KiB, %d pending %d KiB",
             figures[0].rss, figures[1].jobs, figures[1].rss, figures[2].jobs, figures[2].rss))
print(String(format: "   from %d to %d pending jobs: %+d KiB (%.1f%%) — flat means the queue's size does not matter",
             figures[1].jobs, figures[2].jobs, figures[2].rss - figures[1].rss,
             Double(figures[2].rss - figures[1].rss) / Double(figures[1].rss) * 100))
print("   (the step from empty is SQLite's page caches filling — bounded by cache_size per connection)")

kill(pid, SIGTERM)
daemon.waitUntilExit()
print("\njobd exited with \(daemon.terminationStatus)")

// MARK: Helpers

func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: T?
    Task {
        result = try! await body()
        done.signal()
    }
    done.wait()
    return result!
}

/// utime + stime of a process, in seconds.
func cpuSeconds(_ pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 3; utime and stime are 14 and 15.
    let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
    return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func residentKiB(_ pid: Int32) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

/// RssAnon / RssFile / RssShmem: heap versus mapped files (the database's
/// shared-memory index is RssShmem or RssFile).
func residentParts(_ pid: Int32) -> String {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return "?" }
    return text.split(separator: "\n").filter { $0.hasPrefix("RssAnon") || $0.hasPrefix("RssFile") || $0.hasPrefix("RssShmem") }
        .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }.joined(separator: ", ")
}

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
}
