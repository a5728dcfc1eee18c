import Foundation
import Testing

@testable import JobProcesses

#if canImport(Glibc)
import Glibc
#endif

/// Without pidfd_open (Linux < 5.3) the exit is polled on a timerfd.
@Suite("ProcessRunner: without pidfd")
struct ProcessFallbackTests {
    var runner: ProcessRunner {
        var runner = ProcessRunner()
        runner.usesPidfd = false
        return runner
    }

    @Test func outputAndStatusArriveByPolling() async throws {
        let outcome = try await runToCompletion(.argv("cat", input: "polled"), runner: runner).get()
        #expect(outcome.output == Array("polled".utf8))
        let result = await runToCompletion(.shell("sleep 0.3; exit 5"), runner: runner)
        guard case let .failure(error) = result else {
            Issue.record("expected exit 5")
            return
        }
        #expect(error.termination == .exited(5))
    }

    @Test func timeoutStillKillsTheGroup() async throws {
        var spec = ProcessSpec.shell("trap '' TERM; sleep 30")
        spec.timeout = .seconds(1)
        spec.killGrace = .milliseconds(200)
        var leader: pid_t?
        let result = await runToCompletion(spec, runner: runner) { leader = $0.processID }
        guard case let .failure(error) = result else {
            Issue.record("expected a timeout")
            return
        }
        #expect(error.code == .timedOut)
        #expect(error.termination == .signaled(SIGKILL))
        let group = try #require(leader)
        #expect(await eventually { livingMembers(ofGroup: group).isEmpty })
    }
}
