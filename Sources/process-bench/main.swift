// process-bench: how fast ProcessRunner runs `/bin/cat` with a tiny stdin,
// against a plain posix_spawn + waitpid loop in the same run.
//
//     swift run -c release process-bench [RUNS] [ROUNDS]

import Dispatch
import Foundation
import JobEngine
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
let runs = arguments.first.flatMap(Int.init) ?? 1000
let rounds = arguments.dropFirst().first.flatMap(Int.init) ?? 3
let input = Array("hello\n".utf8)

/// posix_spawn `/bin/cat` with stdin and stdout pipes, write the input,
/// read stdout to EOF, waitpid: the least a caller must do.
func plainLoop(_ count: Int) -> Double {
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/cat"), nil]
    defer { free(argv[0]) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let start = ContinuousClock.now
    for _ in 0..<count {
        var inPipe: [Int32] = [0, 0]
        var outPipe: [Int32] = [0, 0]
        guard pipe(&inPipe) == 0, pipe(&outPipe) == 0 else { fatalError("pipe") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        for fd in inPipe + outPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/cat", &actions, nil, &argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        guard rc == 0 else { fatalError("posix_spawn: \(rc)") }
        close(inPipe[0])
        close(outPipe[1])
        _ = input.withUnsafeBytes { write(inPipe[1], $0.baseAddress, $0.count) }
        close(inPipe[1])
        var total = 0
        while true {
            let n = read(outPipe[0], &buffer, buffer.count)
            if n <= 0 { break }
            total += n
        }
        close(outPipe[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        precondition(total == input.count)
    }
    return Double(count) / (ContinuousClock.now - start).seconds
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
