import Foundation
import JobProcesses
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs `spec` through the callback API and waits for its one completion.
/// `started` sees the process as soon as it runs.
func runToCompletion(
    _ spec: ProcessSpec, runner: ProcessRunner = ProcessRunner(),
    started: (RunningProcess) -> Void = { _ in }
) async -> Result<ProcessOutcome, ProcessError> {
    await withCheckedContinuation { continuation in
        let process = runner.run(spec) { continuation.resume(returning: $0) }
        started(process)
    }
}

/// The stdout of a run that must succeed.
func output(of spec: ProcessSpec) async throws -> [UInt8] {
    try await runToCompletion(spec).get().output
}

/// The error of a run that must fail.
func failure(of spec: ProcessSpec) async throws -> ProcessError {
    switch await runToCompletion(spec) {
    case let .success(outcome):
        Issue.record("expected a failure, got output \(outcome.output.count) bytes")
        throw CancellationError()
    case let .failure(error):
        return error
    }
}

/// One line of /proc/PID/stat, parsed enough for these tests.
struct ProcStat {
    var state: Character
    var parent: pid_t
    var group: pid_t

    init?(pid: pid_t) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm) ": state ppid pgrp …
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 3, let state = fields[0].first,
            let parent = pid_t(fields[1]), let group = pid_t(fields[2])
        else { return nil }
        self.state = state
        self.parent = parent
        self.group = group
    }

    var isZombieOrDead: Bool { state == "Z" || state == "X" }
}

/// Whether `pid` names a process that still runs (a zombie does not).
func isAlive(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 || errno == EPERM else { return false }
    guard let stat = ProcStat(pid: pid) else { return false }
    return !stat.isZombieOrDead
}

/// Live (non-zombie) processes whose process group is `group`.
func livingMembers(ofGroup group: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(pid_t.init).filter { pid in
        guard let stat = ProcStat(pid: pid) else { return false }
        return stat.group == group && !stat.isZombieOrDead
    }
}

/// Zombies whose parent is this test process.
func zombieChildren() -> [pid_t] {
    let me = getpid()
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(pid_t.init).filter { pid in
        guard let stat = ProcStat(pid: pid) else { return false }
        return stat.parent == me && stat.state == "Z"
    }
}

/// Polls `condition` every 10 ms for up to `limit` (a liveness bound for
/// what the kernel does asynchronously, like delivering SIGKILL — not a
/// speed assertion).
func eventually(within limit: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Reads a pid a script wrote into `path`, waiting for the file to appear.
func readPID(from path: String) async -> pid_t? {
    var pid: pid_t?
    _ = await eventually {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        return pid != nil
    }
    return pid
}

func temporaryPath(_ name: String) -> String {
    NSTemporaryDirectory() + "jobd-proc-\(name)-\(UUID().uuidString)"
}

extension ProcessSpec {
    static func argv(_ arguments: String..., input: String = "") -> ProcessSpec {
        ProcessSpec(.argv(arguments), input: Array(input.utf8))
    }

    static func shell(_ script: String, input: String = "") -> ProcessSpec {
        ProcessSpec(.shell(script), input: Array(input.utf8))
    }
}

/// Writes an executable script through a child process: a descriptor this
/// process opened for writing could leak, for a moment, into a child that
/// another test spawns at the same time, and exec would fail with ETXTBSY.
func installScript(_ body: String, at path: String, mode: String = "755") async throws {
    var spec = ProcessSpec(.argv(["/bin/sh", "-c", "cat > \"$1\" && chmod \(mode) \"$1\"", "sh", path]))
    spec.input = Array(body.utf8)
    _ = try await runToCompletion(spec).get()
}
