import Foundation
import JobValues
import Locking
import Synchronization

/// Notices steps of the wall clock: an NTP step, an operator's `date -s`,
/// a virtual machine or laptop resumed after a suspend. Between two looks,
/// the wall clock should move as far as the monotonic clock, which no step
/// moves and which does not count a suspend (`SuspendingClock`,
/// CLOCK_MONOTONIC); what it moved beyond that is a step.
///
/// After a step forward, jobd's wall-clock times look older than they are:
/// schedule occurrences the clock jumped over seem due, and every lease
/// seems expired until its runner renews it.
public final class WallClockSteps: Sendable {
    /// A difference between the clocks up to this is drift or a late
    /// reading, not a step.
    public static let threshold: TimeInterval = 5

    private let wall: @Sendable () -> Date
    private let monotonic: @Sendable () -> TimeInterval
    private let last = Mutex<(wall: Date, monotonic: TimeInterval)?>(nil)

    /// - Parameters:
    ///   - wall: the wall clock (the engine's).
    ///   - monotonic: seconds on a clock no step moves (tests inject one).
    public init(
        wall: @escaping @Sendable () -> Date,
        monotonic: @escaping @Sendable () -> TimeInterval = WallClockSteps.suspendingSeconds
    ) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// How far the wall clock stepped since the last look (forward is
    /// positive), when more than ``threshold`` either way; nil otherwise
    /// and at the first look. `now` is the wall clock's reading.
    public func look() -> (now: Date, step: TimeInterval?) {
        let now = (wall: wall(), monotonic: monotonic())
        let previous = last.withAnnouncedLock { last in
            defer { last = now }
            return last
        }
        guard let previous else { return (now.wall, nil) }
        let step = now.wall.timeIntervalSince(previous.wall) - (now.monotonic - previous.monotonic)
        return (now.wall, abs(step) > Self.threshold ? step : nil)
    }

    /// CLOCK_MONOTONIC in seconds.
    public static let suspendingSeconds: @Sendable () -> TimeInterval = {
        (SuspendingClock.now - origin).timeInterval
    }

    private static let origin = SuspendingClock.now

    /// A step's size as jobd writes durations (`1d2h`, `45s`).
    public static func text(_ step: TimeInterval) -> String {
        Duration.seconds(Int64(abs(step).rounded())).jobdText
    }
}
