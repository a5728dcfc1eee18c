import Dispatch
import Foundation
import JobProcesses
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A child gets SIGKILL when jobd dies (PR_SET_PDEATHSIG), and only then:
/// that signal follows the thread that spawned the child, so a child
/// asked for from a thread that ends — a worker retiring — must live on.
/// (That jobd's death ends it is KilledDaemonTests', with the real binary.)
@Suite("ProcessRunner: a child outlives the thread that asked for it")
struct ProcessParentDeathTests {
    @Test func aChildOutlivesTheThreadThatStartedIt() async throws {
        let runner = ProcessRunner()
        let ended = DispatchSemaphore(value: 0)
        let process = Mutex<RunningProcess?>(nil)
        let thread = Thread {
            let running = runner.run(.shell("sleep 120")) { _ in ended.signal() }
            process.withLock { $0 = running }
        }
        thread.start()
        while !thread.isFinished { try await Task.sleep(for: .milliseconds(10)) }
        // The thread itself is gone a moment after its block returned.
        try await Task.sleep(for: .milliseconds(300))
        let running = try #require(process.withLock { $0 })
        let pid = try #require(running.processID)
        #expect(ProcStat(pid: pid).map { !$0.isZombieOrDead } == true, "the child died with the thread that started it")
        running.cancel()
        while ended.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(10)) }
    }
}
