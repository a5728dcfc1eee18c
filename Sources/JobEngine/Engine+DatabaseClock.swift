import Foundation
import JobMetrics
import JobStore
import Locking
import Logging

extension Engine {
    /// This host's wall clock minus the database's (positive: ahead), at
    /// the last reading; nil before the first. Decisions never depend on
    /// it: it is reported (`jobd_clock_skew_seconds`, `jobctl daemon`).
    public var clockSkew: TimeInterval? { context.databaseClock.skew }

    /// Reads the database's clock and makes it the engine's anchor; then
    /// runs `then`, whether the reading worked or not (at once if another
    /// reading is under way). A host whose clock
    /// is more than ``DatabaseClock/skewThreshold`` off the database's is
    /// logged when it first is, and when it is no longer.
    func readDatabaseClock(then: (@Sendable () -> Void)? = nil) {
        let (store, clock, context) = (self.context.store, self.context.databaseClock, self.context)
        guard clock.beginReading() else {
            then?()
            return
        }
        Task {
            defer { clock.endReading() }
            do {
                let reading = try await store.databaseTime()
                let (before, after) = clock.record(reading)
                context.configuration.metrics.setClockSkew(seconds: after)
                let (was, now) = (DatabaseClock.isReported(before), DatabaseClock.isReported(after))
                if now && !was {
                    context.log(
                        .warning,
                        "this host's wall clock is \(DatabaseClock.describe(after)) the database's: "
                            + "jobd goes by the database's clock (timeouts, schedules, delays), but fix the host's time "
                            + "(timedatectl status; chronyc tracking)")
                } else if was && !now {
                    context.log(
                        .notice,
                        "this host's wall clock is back within \(DatabaseClock.skewThreshold)s of the database's")
                }
            } catch {
                // The store logs and reports its own outages; the last anchor stands.
            }
            then?()
        }
    }
}
