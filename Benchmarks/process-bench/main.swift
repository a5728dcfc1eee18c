// process-bench: how fast ProcessRunner runs `/bin/cat` with a tiny stdin,
// against a plain posix_spawn + waitpid loop in the same run.
//
//     swift run -c release process-bench [RUNS] [ROUNDS]

import CBenchSupport
import Dispatch
import Foundation
import JobProcesses
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
let runs = arguments.first.flatMap(Int.init) ?? 1000
let rounds = arguments.dropFirst().first.flatMap(Int.init) ?? 3
let input = Array("hello\n".utf8)

/// The plain posix_spawn loop (CBenchSupport), with this bench's input.
func plainLoop(_ count: Int) -> Double {
    input.withUnsafeBufferPointer { bench_plain_spawn_loop(Int32(count), $0.baseAddress, $0.count) }
}

/// `count` runs through ProcessRunner, `width` in flight at a time, each
/// next one started from the completion of the one before.
func runnerLoop(_ count: Int, width: Int) -> Double {
    let runner = ProcessRunner()
    let spec = ProcessSpec(.argv(["/bin/cat"]), input: input)
    let done = DispatchSemaphore(value: 0)
    let started = Counter()
    let start = ContinuousClock.now
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
    return Double(count) / (ContinuousClock.now - start).seconds
}

final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

func median(_ values: [Double]) -> Double {
    values.sorted()[values.count / 2]
}

func openDescriptors() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

let descriptorsBefore = openDescriptors()
print("process-bench: /bin/cat with a \(input.count)-byte stdin, \(runs) runs per figure, median of \(rounds) rounds")
_ = plainLoop(50)
_ = runnerLoop(50, width: 1)
var plain: [Double] = []
var sequential: [Double] = []
var concurrent: [Double] = []
for _ in 0..<rounds {
    plain.append(plainLoop(runs))
    sequential.append(runnerLoop(runs, width: 1))
    concurrent.append(runnerLoop(runs, width: 16))
}
let base = median(plain)
func line(_ label: String, _ values: [Double]) {
    let rate = median(values)
    let share = rate / base * 100
    let padded = label.padding(toLength: 40, withPad: " ", startingAt: 0)
    print("\(padded)\(String(format: "%7.0f", rate)) runs/s  \(String(format: "%5.1f", share))% of plain")
}
line("plain posix_spawn + waitpid loop", plain)
line("ProcessRunner, one after another", sequential)
line("ProcessRunner, 16 concurrent", concurrent)
print("open descriptors before/after: \(descriptorsBefore)/\(openDescriptors())")
