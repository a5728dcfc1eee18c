// process-bench: how fast ProcessRunner runs `/bin/cat` with a tiny stdin,
// against baselines that do the least a caller must (Baselines, in
// BenchmarkSupport) measured in the same rounds. Each rate is held to a
// share of its baseline (Thresholds.swift); the bench exits 1 when one
// misses.
//
//     swift run -c release process-bench [--quick] [--runs N] [--rounds N] [--tsv FILE]

import BenchmarkSupport
import Dispatch
import Foundation
import JobProcesses
import Synchronization

let arguments = BenchArguments(
    usage: "process-bench [--quick] [--runs N] [--rounds N] [--tsv FILE]", options: ["runs", "rounds"])
let runs = arguments.int("runs", full: 1000, quick: 300)
let rounds = arguments.int("rounds", full: 3)
let input = Array("hello\n".utf8)

/// `count` runs through ProcessRunner, `width` in flight at a time, each
/// next one started from the completion of the one before: runs per second.
func runnerLoop(_ count: Int, width: Int) -> Double {
    let runner = ProcessRunner()
    let spec = ProcessSpec(.argv(["/bin/cat"]), input: input)
    let done = DispatchSemaphore(value: 0)
    let started = Counter()
    let watch = Stopwatch()
    @Sendable func next() {
        guard started.increment() <= count else {
            done.signal()
            return
        }
        runner.run(spec) { result in
            guard case let .success(outcome) = result, outcome.output == input else {
                fatalError("run failed: \(result)")
            }
            next()
        }
    }
    for _ in 0..<width { next() }
    for _ in 0..<width { done.wait() }
    return Double(count) / watch.elapsedSeconds
}

final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
}

func openDescriptors() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

/// A rate measured once per round, rounds interleaved so that load from
/// elsewhere hits each alike; the median of the rounds is reported.
struct Series {
    let name: String
    let measure: (Int) -> Double
    var rates: [Double] = []
}

// The baselines first: a runner's target is a share of one of them.
let plainLoop = 0
var series = [
    Series(name: "plain posix_spawn + waitpid loop, one thread") { Baselines.plainSpawnLoop($0, input: input) },
    Series(name: "ProcessRunner, one after another") { runnerLoop($0, width: 1) },
    Series(name: "ProcessRunner, 16 concurrent") { runnerLoop($0, width: 16) },
]

print("process-bench: /bin/cat with a \(input.count)-byte stdin, \(runs) runs a round, median of \(rounds) rounds; "
      + Machine.summary)
// Warm up, then count descriptors: libdispatch opens its own (an epoll, an
// eventfd, a timerfd) the first time it is used, and keeps them.
for index in series.indices { _ = series[index].measure(50) }
usleep(200_000)
let descriptorsBefore = openDescriptors()
for _ in 0..<rounds {
    for index in series.indices { series[index].rates.append(series[index].measure(runs)) }
}

var report = Report("process-bench", arguments)
func rounded(_ rates: [Double]) -> String { "rounds " + rates.map { Report.format($0, 0) }.joined(separator: ", ") }
let base = median(series[plainLoop].rates)
report.add(series[plainLoop].name, base, unit: "runs/s", note: rounded(series[plainLoop].rates), digits: 0)
for (index, entry) in series.enumerated() where index != plainLoop {
    let rate = median(entry.rates)
    let share = Thresholds.shareOfPlainLoop[entry.name]
    report.add(
        "\(entry.name), share of the plain loop", rate / base * 100, unit: "%", share.map { .atLeast($0) } ?? .none,
        note: Report.format(rate, 0) + " runs/s; " + rounded(entry.rates), digits: 0)
}
// Every pipe, pidfd and timerfd closed once the runners are gone (their
// event loop's thread ends shortly after its last process is reaped).
var descriptorsAfter = openDescriptors()
for _ in 0..<50 where descriptorsAfter > descriptorsBefore {
    usleep(20_000)
    descriptorsAfter = openDescriptors()
}
report.add("open descriptors left over", Double(descriptorsAfter - descriptorsBefore), unit: "", .atMost(0),
           note: "\(descriptorsBefore) before, \(descriptorsAfter) after", digits: 0)
report.finish()
