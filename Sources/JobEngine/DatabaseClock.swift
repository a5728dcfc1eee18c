import Foundation
import JobStore
import Locking
import Synchronization

/// What time it is by the database's clock, as the engine decides by it:
/// job timeouts, schedule occurrences and the times of its writes.
///
/// Stored times come from the database's clock (PostgreSQL's `now()`; on
/// SQLite, the one host's), so comparing them with this host's wall clock
/// would make a host minutes off reject jobs at once, let them overrun, or
/// fire schedules early. Each reading of the database's clock
/// (``JobRunStore/databaseTime()``) is an anchor; between readings, time is
/// counted on from the last anchor on the monotonic clock, which no step
/// of the wall clock moves. Until the first reading, the host's clock
/// stands in.
final class DatabaseClock: Sendable {
    /// How far the host's wall clock may be from the database's before it
    /// is reported: more than a round trip and NTP's usual error.
    static let skewThreshold: TimeInterval = 1

    private struct State {
        var anchor: DatabaseTime?
        /// The host's wall clock minus the database's, at the last reading.
        var skew: TimeInterval?
        /// A reading is under way.
        var reading = false
    }

    /// The host's wall clock (the engine's configuration; tests skew it).
    let host: @Sendable () -> Date
    private let state = Mutex(State())

    init(host: @escaping @Sendable () -> Date) {
        self.host = host
    }

    /// The database's time now.
    func now() -> Date {
        let anchor = state.withAnnouncedLock { $0.anchor }
        return anchor?.now() ?? host()
    }

    /// The host's wall clock minus the database's (positive: the host is
    /// ahead), at the last reading; nil before the first.
    var skew: TimeInterval? {
        state.withAnnouncedLock { $0.skew }
    }

    /// Whether a reading may start now: one at a time, so that a database
    /// that does not answer gets one waiting call, not one per round.
    func beginReading() -> Bool {
        state.withAnnouncedLock { state in
            defer { state.reading = true }
            return !state.reading
        }
    }

    func endReading() {
        state.withAnnouncedLock { $0.reading = false }
    }

    /// Takes `reading` as the new anchor; gives the skew before and after.
    @discardableResult
    func record(_ reading: DatabaseTime) -> (before: TimeInterval?, after: TimeInterval) {
        let instant = ContinuousClock.now
        let skew = host().timeIntervalSince(reading.now(instant))
        return state.withAnnouncedLock { state in
            defer { (state.anchor, state.skew) = (reading, skew) }
            return (state.skew, skew)
        }
    }

    /// Whether a skew is large enough to report.
    static func isReported(_ skew: TimeInterval?) -> Bool {
        skew.map { abs($0) > skewThreshold } ?? false
    }

    /// `300.0s ahead of`, `1.3s behind`: how the host's clock stands to the
    /// database's (as `jobctl daemon` and `jobd --check` say it).
    static func describe(_ skew: TimeInterval) -> String {
        String(format: "%.1fs ", abs(skew)) + (skew > 0 ? "ahead of" : "behind")
    }
}
