import Foundation
import JobValues

/// The database's clock as one round trip read it: `time` is the
/// database's time at the monotonic instant `at` (the middle of the round
/// trip, so the error is at most half of `roundTrip`).
///
/// Stored times (`run_at`, `started_at`, lease expiries, schedule marks)
/// are written by the database's clock on PostgreSQL (`now()`), so a host
/// compares with them on that clock, not its own wall clock, which may be
/// minutes off. On SQLite the database's clock is the one host's.
public struct DatabaseTime: Sendable, Hashable {
    public var time: Date
    public var at: ContinuousClock.Instant
    public var roundTrip: Duration

    public init(time: Date, at: ContinuousClock.Instant, roundTrip: Duration = .zero) {
        self.time = time
        self.at = at
        self.roundTrip = roundTrip
    }

    /// The database's time now, counted on from `at` by the monotonic
    /// clock (which no step of a wall clock moves).
    public func now(_ instant: ContinuousClock.Instant = .now) -> Date {
        time + (instant - at).timeInterval
    }
}

extension JobRunStore {
    /// The host's own clock: a SQLite database is on this host, and its
    /// timestamps are this host's.
    public func databaseTime() async throws -> DatabaseTime {
        DatabaseTime(time: Date(), at: .now)
    }
}
