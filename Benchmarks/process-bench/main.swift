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
    func increment() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}

func openDescriptors() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

// Warm up, then count descriptors: libdispatch opens its own (an epoll, an
// eventfd, a timerfd) the first time it is used, and keeps them.
_ = Baselines.plainSpawnLoop(50, input: input)
_ = runnerLoop(50, width: 16)
// The loop on N threads: N the fastest of 1, 2 and 4 threads a core.
let probe = Baselines.fastestPlainThreads(runs, input: input)
let threads = probe.threads
usleep(200_000)
let descriptorsBefore = openDescriptors()

// Baselines first (a runner's bound is a share of one of them), then the
// runner: one at a time against the one-thread loop, 16 in flight against
// the loop on every core.
var series = [
    Series("plain posix_spawn loop, 1 thread", unit: "runs/s") { Baselines.plainSpawnLoop(runs, input: input) },
    Series("plain posix_spawn loop, \(threads) threads", unit: "runs/s") {
        Baselines.plainSpawnThreads(runs, threads: threads, input: input)
    },
    Series("ProcessRunner, 1 at a time", unit: "runs/s") { runnerLoop(runs, width: 1) },
    Series("ProcessRunner, 16 at a time", unit: "runs/s") { runnerLoop(runs, width: 16) },
]

print(
    "process-bench: /bin/cat with a \(input.count)-byte stdin, \(runs) runs a round, median of \(rounds) rounds; "
        + Machine.summary)
Series.measure(&series, rounds: rounds)

var report = Report("process-bench", arguments)
let (oneThread, allThreads) = (series[0], series[1])
report.add(baseline: oneThread)
report.add(
    baseline: allThreads,
    note: "; threads tried: "
        + probe.rates.map { "\($0.threads) → \(Report.format($0.rate, 0))" }.joined(separator: ", "))
for (entry, baseline) in [(series[2], oneThread), (series[3], allThreads)] {
    report.add(entry, shareOf: baseline, atLeast: Thresholds.shareOfPlainLoop[entry.name])
}
// Every pipe, pidfd and timerfd closed once the runners are gone (their
// event loop's thread ends shortly after its last process is reaped).
var descriptorsAfter = openDescriptors()
for _ in 0..<50 where descriptorsAfter > descriptorsBefore {
    usleep(20_000)
    descriptorsAfter = openDescriptors()
}
report.add(
    "open descriptors left over", Double(descriptorsAfter - descriptorsBefore), unit: "", .atMost(0),
    note: "\(descriptorsBefore) before, \(descriptorsAfter) after", digits: 0)
report.finish()
