import Foundation
import JobProcesses
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("ProcessRunner: timeouts, cancel, limits, reaping")
struct ProcessTeardownTests {
    @Test func timeoutSendsTERMThenKILLToAChildThatTrapsTERM() async throws {
        // The trap runs (proving SIGTERM came first) but does not exit, so
        // only SIGKILL after the grace ends it.
        var spec = ProcessSpec.shell("trap 'echo got-TERM >&2' TERM; echo ready >&2; while :; do sleep 0.05; done")
        // The timeout leaves the shell ample time to set its trap first.
        spec.timeout = .seconds(1)
        spec.killGrace = .milliseconds(500)
        let error = try await failure(of: spec)
        #expect(error.code == .timedOut)
        #expect(error.killed)
        #expect(error.termination == .signaled(SIGKILL))
        #expect(String(decoding: error.stderrTail, as: UTF8.self).contains("got-TERM"))
        #expect(error.description.contains("timed out after 1s"))
        #expect(error.description.contains("SIGKILL 500ms later"))
    }

    @Test func timeoutWithIgnoredTERM() async throws {
        var spec = ProcessSpec.shell("trap '' TERM; sleep 30")
        spec.timeout = .seconds(1)
        spec.killGrace = .milliseconds(300)
        var pid: pid_t?
        let result = await runToCompletion(spec) { pid = $0.processID }
        guard case let .failure(error) = result else {
            Issue.record("expected a timeout")
            return
        }
        #expect(error.code == .timedOut)
        #expect(error.killed)
        #expect(error.termination == .signaled(SIGKILL))
        let group = try #require(pid)
        #expect(await eventually { livingMembers(ofGroup: group).isEmpty })
    }

    @Test func childThatHonoursTERMIsNotKilled() async throws {
        var spec = ProcessSpec.argv("sleep", "30")
        spec.timeout = .milliseconds(100)
        spec.killGrace = .seconds(30)
        let error = try await failure(of: spec)
        #expect(error.code == .timedOut)
        #expect(!error.killed)
        #expect(error.termination == .signaled(SIGTERM))
    }

    /// Grandchildren: one that dies of SIGTERM, one that ignores it while
    /// holding our stdout (only the group SIGKILL ends it), one that
    /// ignores it with stdio elsewhere (killed as a leftover once the
    /// leader is gone).
    @Test(arguments: [
        "sleep 300 & echo $! > PIDFILE; wait",
        "(trap '' TERM; exec sleep 300) & echo $! > PIDFILE; wait",
        "(trap '' TERM; exec sleep 300 </dev/null >/dev/null 2>&1) & echo $! > PIDFILE; wait",
    ])
    func timeoutLeavesNoGrandchild(script: String) async throws {
        let pidFile = temporaryPath("grandchild")
        defer { unlink(pidFile) }
        var spec = ProcessSpec.shell(script.replacingOccurrences(of: "PIDFILE", with: pidFile))
        spec.timeout = .milliseconds(300)
        spec.killGrace = .milliseconds(300)
        var leader: pid_t?
        let result = await runToCompletion(spec) { leader = $0.processID }
        guard case let .failure(error) = result else {
            Issue.record("expected a timeout")
            return
        }
        #expect(error.code == .timedOut)
        let grandchild = try #require(await readPID(from: pidFile))
        let group = try #require(leader)
        #expect(ProcStat(pid: grandchild).map { $0.group == group } ?? true)
        #expect(await eventually { !isAlive(grandchild) })
        #expect(await eventually { livingMembers(ofGroup: group).isEmpty })
    }

    @Test func leftoversOfASuccessfulRunAreEnded() async throws {
        let pidFile = temporaryPath("leftover")
        defer { unlink(pidFile) }
        let spec = ProcessSpec.shell("sleep 300 </dev/null >/dev/null 2>&1 & echo $! > \(pidFile); echo done")
        let outcome = try await runToCompletion(spec).get()
        #expect(outcome.output == Array("done\n".utf8))
        let grandchild = try #require(await readPID(from: pidFile))
        #expect(await eventually { !isAlive(grandchild) })
    }

    @Test func cancelEndsTheRunAsCancelled() async throws {
        var spec = ProcessSpec.argv("sleep", "30")
        spec.killGrace = .seconds(30)
        let result = await runToCompletion(spec) { process in
            process.cancel()
            process.cancel()  // twice is fine
        }
        guard case let .failure(error) = result else {
            Issue.record("expected cancelled")
            return
        }
        #expect(error.code == .cancelled)
        #expect(error.termination == .signaled(SIGTERM))
        #expect(!error.killed)
        #expect(error.description.contains("was cancelled"))
    }

    @Test func terminateWithZeroGraceKillsAtOnce() async throws {
        let result = await runToCompletion(.shell("trap '' TERM; sleep 30")) { process in
            process.terminate(grace: .zero)
        }
        guard case let .failure(error) = result else {
            Issue.record("expected cancelled")
            return
        }
        #expect(error.code == .cancelled)
        #expect(error.killed)
        #expect(error.termination == .signaled(SIGKILL))
    }

    @Test func cancellingTheAsyncRunCancelsTheProcess() async throws {
        let task = Task { try await ProcessRunner().run(.argv("sleep", "600")) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("expected a cancellation")
        } catch let error as ProcessError {
            #expect(error.code == .cancelled)
        }
    }

    @Test func asyncRunReturnsTheOutput() async throws {
        let outcome = try await ProcessRunner().run(.argv("cat", input: "via async"))
        #expect(outcome.output == Array("via async".utf8))
    }

    @Test(arguments: ["yes", "yes & yes & wait", "head -c 70000 /dev/zero; sleep 300"])
    func outputOverTheLimitRejectsAndEndsTheGroup(script: String) async throws {
        var spec = ProcessSpec.shell(script)
        spec.outputLimit = 64 * 1024
        spec.killGrace = .milliseconds(500)
        var leader: pid_t?
        let result = await runToCompletion(spec) { leader = $0.processID }
        guard case let .failure(error) = result else {
            Issue.record("expected the limit to reject the run")
            return
        }
        #expect(error.code == .outputLimitExceeded)
        #expect(error.description.contains("more than 64KiB"))
        #expect(error.description.contains("not truncated"))
        let group = try #require(leader)
        #expect(await eventually { livingMembers(ofGroup: group).isEmpty })
    }

    @Test func outputExactlyAtTheLimitIsAccepted() async throws {
        var spec = ProcessSpec.shell("head -c 65536 /dev/zero")
        spec.outputLimit = 65536
        #expect(try await output(of: spec).count == 65536)
    }

    @Test func manyRunsLeaveNoZombies() async throws {
        var pids: [pid_t] = []
        for index in 0..<60 {
            let spec: ProcessSpec
            switch index % 4 {
            case 0: spec = .argv("cat", input: "x")
            case 1: spec = .shell("exit 4")
            case 2: spec = .shell("echo err >&2; kill -KILL $$")
            default:
                var slow = ProcessSpec.argv("sleep", "10")
                slow.timeout = .milliseconds(20)
                slow.killGrace = .milliseconds(20)
                spec = slow
            }
            _ = await runToCompletion(spec) { process in
                if let pid = process.processID { pids.append(pid) }
            }
        }
        #expect(pids.count == 60)
        let zombies = Set(zombieChildren()).intersection(pids)
        #expect(zombies.isEmpty)
        #expect(pids.allSatisfy { !isAlive($0) || ProcStat(pid: $0)?.parent != getpid() })
    }

    @Test func twoHundredConcurrentRunsAllComplete() async throws {
        let results = await withTaskGroup(of: (Int, Result<ProcessOutcome, ProcessError>).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let input = "run \(index)\n" + String(repeating: "\(index)", count: index * 50)
                    return (index, await runToCompletion(.argv("cat", input: input)))
                }
            }
            var all: [Int: Result<ProcessOutcome, ProcessError>] = [:]
            for await (index, result) in group { all[index] = result }
            return all
        }
        #expect(results.count == 200)
        for (index, result) in results {
            let expected = "run \(index)\n" + String(repeating: "\(index)", count: index * 50)
            #expect((try? result.get().output) == Array(expected.utf8), "run \(index)")
        }
    }
}
