import Dispatch
@testable import JobEngine
import Synchronization
import Testing

/// The engine's timers: one source over a heap; a cancelled timer is gone at once.
@Suite struct EngineTimerTests {
    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() async throws {
        let fired = Mutex<[Int]>([])
        var timers: [OneShotTimer] = []
        for (index, delay) in [120, 40, 80, 20, 60].enumerated() {
            timers.append(OneShotTimer.schedule(after: .milliseconds(delay)) { fired.withLock { $0.append(index) } })
        }
        timers[2].cancel()  // the 80 ms one
        try await Task.sleep(for: .milliseconds(400))
        #expect(fired.withLock { $0 } == [3, 1, 4, 0])
    }

    @Test func cancellingReleasesTheTimerAtOnce() async throws {
        let before = TimerHeap.shared.count
        let timers = (0..<10_000).map { _ in OneShotTimer.schedule(after: .seconds(600)) {} }
        #expect(TimerHeap.shared.count >= before + 10_000)
        for timer in timers { timer.cancel() }
        #expect(TimerHeap.shared.count <= before + 100, "cancelled timers are not kept until their deadline")
    }
}
