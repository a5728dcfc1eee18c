import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn, for the tests and benchmarks.
///
/// Not Foundation's `Process`: in Swift 6.3.1 its `run()` reads past a
/// buffer (swift-corelibs-foundation #5472) and crashes the test process now
/// and then. What a caller may rely on:
///
/// - The child has descriptors 0, 1 and 2 only, as asked; every other one
///   is closed in it. Its signal mask is empty and every signal has its
///   default action (but glibc's own two, 32 and 33, which its posix_spawn
///   leaves ignored).
/// - The child is reaped (waitpid) as soon as it ends, by a thread of its
///   own: no zombie stays. Until then `pid` stays this child's, and a signal
///   sent through ``signal(_:toGroup:)`` never reaches another process
///   that took the pid over.
/// - With ``Lifetime/endsWithOwner`` (the default), a child still running
///   when this value goes is killed (SIGKILL, its process group too if it
///   leads one) and reaped: no test leaves a process behind.
/// - Captured output (``Output/capture``) is read by a thread of its own
///   from the start, and stdin bytes are written by the same thread: a child
///   never blocks on a full pipe, whatever the caller does meanwhile.
public final class SpawnedProcess: Sendable {
    /// How the child ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// Its exit code; nil when a signal ended it.
        public var exitCode: Int32? {
            if case .exited(let code) = self { return code }
            return nil
        }

        /// The exit code, or the number of the signal that ended it: what
        /// Foundation's `Process.terminationStatus` gave.
        public var status: Int32 {
            switch self {
            case .exited(let code), .signaled(let code): code
            }
        }

        public var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signaled(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }

        /// From a `waitpid` status (no WUNTRACED, so never "stopped").
        init(waitStatus status: Int32) {
            self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
        }
    }

    /// Where the child's stdin comes from.
    public enum Input: Sendable {
        case null
        /// The test process's own stdin.
        case inherit
        case file(String)
        /// These bytes through a pipe, then its end.
        case bytes([UInt8])
    }

    /// Where the child's stdout or stderr goes.
    public enum Output: Sendable {
        case null
        /// The test process's own.
        case inherit
        /// This file, made or emptied first.
        case file(String)
        /// Through a pipe into memory: ``captured`` while it runs, ``finish()`` at its end.
        case capture
        /// For stderr only: wherever stdout goes, sharing its offset (`2>&1`).
        case sameAsStdout
    }

    /// What becomes of a child still running when this value goes.
    public enum Lifetime: Sendable {
        /// Killed and reaped.
        case endsWithOwner
        /// Left running (a watchdog meant to outlive the test process);
        /// still reaped if it ends first.
        case outlivesOwner
    }

    /// What was captured so far, and whether each captured stream ended
    /// (a stream not captured counts as ended).
    public struct Captured: Sendable {
        public var stdout: [UInt8] = []
        public var stderr: [UInt8] = []
        public var stdoutEnded = false
        public var stderrEnded = false
    }

    public var pid: pid_t { reaper.pid }
    /// True when the child was put in a process group of its own (its pgid is its pid).
    public let leadsItsGroup: Bool
    private let lifetime: Lifetime
    private let reaper: Reaper
    private let pump: OutputPump?

    /// Starts `executable` (a path: PATH is not searched) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; nil for the test process's own.
    ///   - directory: its working directory; nil for the test process's.
    ///     Files named in `stdin`, `stdout` and `stderr` are opened before it is entered.
    ///   - ownProcessGroup: puts it in a new process group, which it leads.
    ///   - passing: descriptors of the test process that become the child's
    ///     3, 4, … (Chromium's `--remote-debugging-pipe` reads 3 and writes 4).
    ///     Each must be 10 or above, so that placing one never overwrites
    ///     another; the caller closes its own copies.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Input = .null, stdout: Output = .null, stderr: Output = .null, ownProcessGroup: Bool = false,
        lifetime: Lifetime = .endsWithOwner, passing descriptors: [Int32] = []
    ) throws {
        precondition(descriptors.allSatisfy { $0 >= 10 }, "a descriptor passed on must be 10 or above")
        var pipes = Pipes()
        do {
            var streams: [ChildStream] = []
            var inputBytes: [UInt8] = []
            switch stdin {
            case .null: streams.append(.open("/dev/null", O_RDONLY))
            case .inherit: streams.append(.inherit)
            case .file(let path): streams.append(.open(path, O_RDONLY))
            case .bytes(let bytes):
                streams.append(.dup(try pipes.makeInput(executable)))
                inputBytes = bytes
            }
            for (index, output) in [stdout, stderr].enumerated() {
                switch output {
                case .null: streams.append(.open("/dev/null", O_WRONLY))
                case .inherit: streams.append(.inherit)
                case .file(let path): streams.append(.open(path, O_WRONLY | O_CREAT | O_TRUNC))
                case .capture: streams.append(.dup(try pipes.makeOutput(index, executable)))
                case .sameAsStdout:
                    precondition(index == 1, "stdout cannot be .sameAsStdout")
                    streams.append(.dup(1))
                }
            }
            streams += descriptors.map(ChildStream.dup)
            let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
            reaper = Reaper(
                try posixSpawn(
                    executable, arguments, environment: environment, directory: directory, streams: streams,
                    ownProcessGroup: ownProcessGroup))
            pipes.closeChildEnds()
            if pipes.input != nil || !pipes.outputs.isEmpty {
                pump = OutputPump(input: pipes.input.map { ($0, inputBytes) }, outputs: pipes.outputs)
            } else {
                pump = nil
            }
        } catch {
            pipes.closeAll()
            throw error
        }
        leadsItsGroup = ownProcessGroup
        self.lifetime = lifetime
    }

    deinit {
        guard lifetime == .endsWithOwner else { return }
        reaper.send(SIGKILL, toGroup: leadsItsGroup)
        _ = reaper.wait()
    }

    /// Whether it still runs (or has just ended and is being reaped); never blocks.
    public var isRunning: Bool { reaper.current == nil }

    /// Its end, once reaped; nil before.
    public var termination: Termination? { reaper.current }

    /// Sends `signal` to the child, or to its process group; nothing once it was reaped.
    public func signal(_ signal: Int32, toGroup: Bool = false) {
        reaper.send(signal, toGroup: toGroup)
    }

    /// Blocks until the child ended and was reaped. Does not wait for the
    /// end of its captured output: ``finish()`` does both.
    @discardableResult
    public func wait() -> Termination {
        reaper.wait()!
    }

    /// The child's end if it comes within `limit`, else nil (it is left running). Blocks.
    public func wait(within limit: Duration) -> Termination? {
        let (seconds, attoseconds) = limit.components
        return reaper.wait(until: .now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
    }

    /// ``wait()`` on a thread of its own, never on Swift's cooperative pool.
    @discardableResult
    public func waitForExit() async -> Termination {
        await onOwnThread { self.wait() }
    }

    /// ``wait(within:)`` without blocking a thread: polls every 10 ms.
    public func waitForExit(within limit: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let termination { return termination }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// SIGTERM to the child; SIGKILL if it still runs after `grace`; reaps it. Blocks.
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) -> Termination {
        signal(SIGTERM)
        if let termination = wait(within: grace) { return termination }
        signal(SIGKILL)
        return wait()
    }

    /// What was captured so far (``Output/capture``).
    public var captured: Captured {
        pump?.captured.withLock { $0 } ?? Captured(stdoutEnded: true, stderrEnded: true)
    }

    /// Reads the captured output to its end, then waits for the child.
    /// (A grandchild that keeps the output open delays this until it closes it.)
    @discardableResult
    public func finish() -> Finished {
        pump?.waitForEnd()
        let termination = wait()
        let captured = self.captured
        return Finished(termination: termination, stdout: captured.stdout, stderr: captured.stderr)
    }

    /// ``finish()`` on a thread of its own.
    @discardableResult
    public func finish() async -> Finished {
        await onOwnThread { self.finish() }
    }
}
