import Foundation
import Spawn
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SpawnedProcessTests {
    @Test func exitCodes() async throws {
        #expect(try await SpawnedProcess.run("/bin/true", []).termination == .exited(0))
        #expect(try await SpawnedProcess.run("/bin/false", []).termination == .exited(1))
        let finished = try await SpawnedProcess.run("/bin/sh", ["-c", "exit 42"])
        #expect(finished.termination == .exited(42))
        #expect(finished.termination.exitCode == 42 && finished.termination.status == 42)
    }

    @Test func aMissingProgramThrows() {
        #expect(throws: SpawnError.self) { try SpawnedProcess("/nonexistent/program", []) }
        #expect(throws: SpawnError.self) { try SpawnedProcess("/etc/passwd", []) }
    }

    @Test func aSignalEndsIt() async throws {
        let child = try SpawnedProcess("/bin/sleep", ["30"])
        #expect(child.isRunning)
        #expect(child.wait(within: .milliseconds(50)) == nil, "still running")
        child.signal(SIGTERM)
        #expect(await child.waitForExit() == .signaled(SIGTERM))
        #expect(child.termination?.exitCode == nil && child.termination?.status == SIGTERM)
        #expect(!child.isRunning)
        child.signal(SIGKILL)  // Reaped: nothing is sent.
    }

    @Test func theChildHasDefaultSignalActionsAndAnEmptyMask() async throws {
        // SIGUSR2 ignored in the test process (for the while), and blocked on the thread that spawns.
        let before = signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, before) }
        let (parent, child) = try await onThread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGUSR2)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            let parent = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
            return (parent, try SpawnedProcess.run("/bin/grep", ["-E", "^Sig(Blk|Ign)", "/proc/self/status"]))
        }
        #expect(hasSIGUSR2(parent, "SigBlk") && hasSIGUSR2(parent, "SigIgn"), "\(parent)")
        #expect(child.termination == .exited(0))
        #expect(signalSet(child.stdoutText, "SigBlk") == 0, "\(child)")
        // glibc's posix_spawn leaves its two internal signals (32, 33) ignored, whatever the flags say.
        #expect(signalSet(child.stdoutText, "SigIgn").map { $0 & ~(0b11 << 31) } == 0, "\(child)")
    }

    @Test func stopEscalatesToSIGKILL() async throws {
        let child = try SpawnedProcess(
            "/bin/sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"],
            stdout: .capture)
        #expect(await waitFor { child.captured.stdout == Array("ready\n".utf8) })
        let watch = ContinuousClock.now
        #expect(child.stop(grace: .milliseconds(300)) == .signaled(SIGKILL))
        #expect(ContinuousClock.now - watch >= .milliseconds(300))
    }

    @Test func aGroupIsSignalledAsOne() async throws {
        let child = try SpawnedProcess(
            "/bin/sh", ["-c", "sleep 600 & echo $!; wait"], stdout: .capture,
            ownProcessGroup: true)
        #expect(child.leadsItsGroup)
        #expect(await waitFor { child.captured.stdout.last == UInt8(ascii: "\n") })
        let grandchild = try #require(pid_t(child.captured.stdoutText.dropLast()))
        #expect(getpgid(grandchild) == child.pid)
        child.signal(SIGTERM, toGroup: true)
        #expect(await child.waitForExit(within: .seconds(10)) == .signaled(SIGTERM))
        #expect(await waitFor { kill(grandchild, 0) != 0 }, "the grandchild got SIGTERM too")
    }

    @Test func largeOutputOnBothStreamsIsReadWhileItRuns() async throws {
        // 4 MiB on each stream, far beyond a pipe's 64 KiB, nobody waiting on the child meanwhile.
        let child = try SpawnedProcess(
            "/bin/sh", ["-c", "head -c 4194304 /dev/zero; head -c 4194304 /dev/zero | tr '\\0' e >&2"],
            stdout: .capture, stderr: .capture)
        #expect(await child.waitForExit(within: .seconds(60)) == .exited(0))
        let finished = await child.finish()
        #expect(finished.stdout.count == 4 << 20 && finished.stdout.allSatisfy { $0 == 0 })
        #expect(finished.stderr.count == 4 << 20 && finished.stderr.allSatisfy { $0 == UInt8(ascii: "e") })
        #expect(child.captured.stdoutEnded && child.captured.stderrEnded)
    }

    @Test func stdinBytesPassThrough() async throws {
        let input = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let finished = try await SpawnedProcess.run("/bin/cat", [], stdin: .bytes(input))
        #expect(finished.termination == .exited(0))
        #expect(finished.stdout == input)
        // A child that reads none of it still ends, and so does the test.
        #expect(try await SpawnedProcess.run("/bin/true", [], stdin: .bytes(input)).termination == .exited(0))
    }

    @Test func filesEnvironmentAndDirectory() async throws {
        let folder = NSTemporaryDirectory() + "spawn-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "from a file\n".write(toFile: folder + "/in", atomically: true, encoding: .utf8)
        let child = try SpawnedProcess(
            "/bin/sh", ["-c", "cat; echo \"$GREETING\"; pwd; echo oops >&2"], environment: ["GREETING": "hello"],
            directory: "/", stdin: .file(folder + "/in"), stdout: .file(folder + "/out"), stderr: .sameAsStdout)
        #expect(await child.waitForExit() == .exited(0))
        let written = try String(contentsOfFile: folder + "/out", encoding: .utf8)
        #expect(written == "from a file\nhello\n/\noops\n")
        let environment = try await SpawnedProcess.run("/usr/bin/env", [], environment: ["ONLY": "this"])
        #expect(environment.stdoutText == "ONLY=this\n")
    }

    @Test func onlyDescriptorsZeroOneAndTwoReachTheChild() async throws {
        // A descriptor of the test process without close-on-exec.
        let leaky = open("/dev/null", O_RDONLY)
        defer { close(leaky) }
        #expect(leaky > 2)
        // The shell's descriptors, listed by ls (a child of it: `; true` keeps it from exec'ing ls).
        let finished = try await SpawnedProcess.run(
            "/bin/sh", ["-c", "ls /proc/$$/fd; true"], stdin: .bytes(Array("x".utf8)))
        #expect(finished.stdoutText.split(separator: "\n") == ["0", "1", "2"], "\(finished)")
        // ls's own listing: its /proc/self/fd directory is open while it reads it.
        let own = try await SpawnedProcess.run("/bin/ls", ["/proc/self/fd"])
        #expect(own.stdoutText.split(separator: "\n") == ["0", "1", "2", "3"], "\(own)")
    }

    @Test func noZombieIsLeft() async throws {
        // Reaped as soon as it ends, though nobody waits for it: a zombie would still answer kill(pid, 0).
        let child = try SpawnedProcess("/bin/true", [])
        #expect(await waitFor { kill(child.pid, 0) != 0 && errno == ESRCH }, "reaped without a wait")
        #expect(child.termination == .exited(0))
        // Dropped at once, maybe before it ends: killed and reaped.
        let pid = try SpawnedProcess("/bin/sleep", ["30"]).pid
        #expect(kill(pid, 0) != 0 && errno == ESRCH, "reaped when dropped")
    }

    @Test func aDroppedChildIsKilledWithItsGroup() async throws {
        var pids: (pid_t, pid_t) = (0, 0)
        do {
            let child = try SpawnedProcess(
                "/bin/sh", ["-c", "sleep 600 & echo $!; wait"], stdout: .capture,
                ownProcessGroup: true)
            #expect(await waitFor { child.captured.stdout.last == UInt8(ascii: "\n") })
            pids = (child.pid, try #require(pid_t(child.captured.stdoutText.dropLast())))
        }
        #expect(kill(pids.0, 0) != 0, "killed and reaped")
        #expect(await waitFor { kill(pids.1, 0) != 0 }, "the grandchild is killed too (and reaped by init)")
    }

    @Test func manyAtOnce() async throws {
        try await withThrowingTaskGroup(of: Finished.self) { group in
            for index in 0..<32 {
                group.addTask { try await SpawnedProcess.run("/bin/echo", ["\(index)"]) }
            }
            var seen: Set<String> = []
            for try await finished in group {
                #expect(finished.termination == .exited(0))
                seen.insert(finished.stdoutText)
            }
            #expect(seen == Set((0..<32).map { "\($0)\n" }))
        }
    }
}

/// Polls `condition` every 10 ms for up to 10 s.
private func waitFor(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// The signal set `field` (`SigBlk`, `SigIgn`) of a /proc status: bit n - 1 for signal n.
private func signalSet(_ status: String, _ field: String) -> UInt64? {
    status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        .flatMap { UInt64($0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
}

private func hasSIGUSR2(_ status: String, _ field: String) -> Bool {
    (signalSet(status, field) ?? 0) & (1 << (SIGUSR2 - 1)) != 0
}

private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

extension SpawnedProcess.Captured {
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}
