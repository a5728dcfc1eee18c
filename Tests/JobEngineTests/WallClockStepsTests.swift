import Foundation
import Synchronization
import Testing

@testable import JobEngine

/// Steps of the wall clock against a monotonic one, both injected.
@Suite struct WallClockStepsTests {
    final class Clocks: Sendable {
        let wall = Mutex(Date(timeIntervalSince1970: 1_900_000_000))
        let monotonic = Mutex(1000.0)

        /// Both clocks move on by `seconds`; the wall clock then steps by `step`.
        func pass(_ seconds: TimeInterval, step: TimeInterval = 0) {
            monotonic.withLock { $0 += seconds }
            wall.withLock { $0 += seconds + step }
        }

        func steps() -> WallClockSteps {
            WallClockSteps(wall: { self.wall.withLock { $0 } }, monotonic: { self.monotonic.withLock { $0 } })
        }
    }

    @Test func aStepEitherWayIsSeenOnceAndDriftIsNot() {
        let clocks = Clocks()
        let steps = clocks.steps()
        #expect(steps.look().step == nil, "the first look has nothing to compare with")
        clocks.pass(600, step: 2)
        #expect(steps.look().step == nil, "2 s is drift or a late reading")
        clocks.pass(30, step: 3600)
        let forward = steps.look()
        #expect(forward.step == 3600)
        #expect(forward.now == clocks.wall.withLock { $0 })
        clocks.pass(30)
        #expect(steps.look().step == nil, "seen once")
        clocks.pass(1, step: -7200)
        #expect(steps.look().step == -7200)
        #expect(WallClockSteps.text(3600 * 26 + 5) == "1d2h5s")
    }
}
