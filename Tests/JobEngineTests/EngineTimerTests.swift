import Dispatch
import Synchronization
import Testing

@testable import JobEngine

/// The engine's timers: one source over a heap; a cancelled timer is gone at once.
@Suite struct EngineTimerTests {
    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() async throws {
        let fired = Mutex<[Int]>([])
        let heap = TimerHeap()
        var timers: [OneShotTimer] = []
        for (index, delay) in [120, 40, 80, 20, 60].enumerated() {
            timers.append(
                OneShotTimer.schedule(on: heap, after: .milliseconds(delay)) { fired.withLock { $0.append(index) } })
        }
        timers[2].cancel()  // the 80 ms one
        try await Task.sleep(for: .milliseconds(400))
        #expect(fired.withLock { $0 } == [3, 1, 4, 0])
    }

    @Test func cancellingReleasesTheTimerAtOnce() async throws {
        let heap = TimerHeap()
        let ids = (0..<10_000).map { index in heap.add(deadline: .now() + .seconds(600 + index % 7)) {} }
        #expect(heap.count == 10_000)
        for id in ids.shuffled() { heap.remove(id) }
        #expect(heap.count == 0, "cancelled timers are not kept until their deadline")
    }

    @Test func randomTimersFireInOrderAndCancelledOnesNever() async throws {
        let heap = TimerHeap()
        let fired = Mutex<[Int]>([])
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<300).map { _ in Int.random(in: 150...350, using: &generator) }
        let start = DispatchTime.now()
        let ids = delays.enumerated().map { index, delay in
            heap.add(deadline: start + .milliseconds(delay)) { fired.withLock { $0.append(index) } }
        }
        let cancelled = Set((0..<300).filter { _ in Bool.random(using: &generator) })
        for index in cancelled { heap.remove(ids[index]) }
        try await Task.sleep(for: .milliseconds(900))
        let order = fired.withLock { $0 }
        #expect(Set(order) == Set(0..<300).subtracting(cancelled))
        let firedDelays = order.map { delays[$0] }
        #expect(firedDelays == firedDelays.sorted(), "in deadline order")
        #expect(heap.count == 0)
    }
}
