import Dispatch
import Foundation
import JobConfig
import JobValues
import Testing

@testable import JobEngine

/// A timeout of 9223372036854775 s crashed jobd when it armed the
/// job's timer; the durations jobd reads are bounded now, and the timers
/// are safe for any date whatever.
@Suite struct HostileTimerTests {
    /// Whatever date a timer is given — one read back from a database
    /// edited by hand, a timeout added to a start time — arming it never
    /// traps (an `Int(seconds * 1000)` of 2.3e18 s did).
    @Test(arguments: [1e300, 9.3e15, -1e300, .nan, .infinity])
    func aTimerForAnyDateIsSafe(secondsFromNow: Double) {
        let now = Date()
        let date = now + secondsFromNow
        let interval = DispatchTimeInterval.until(date, now: now)
        if secondsFromNow > 0 {
            #expect(interval == .milliseconds(Int(Duration.jobdMaximumMilliseconds)))
        } else {
            #expect(interval == .milliseconds(0))
        }
        OneShotTimer.schedule(on: TimerHeap(), at: date, now: now) {}.cancel()
    }
}
