import Foundation
import JobStore
import Logging

/// What the engine remembers between lease renewals, so that the log says
/// what changed rather than the same line at every renewal: a failure once
/// (then the recovery), a lease held up by a locked row once per job (then
/// its renewal). A lease held up once only is not told: this jobd's own
/// writer holds a job's row for a moment while it finishes it.
struct RenewalState {
    struct Note {
        var level: Logger.Level
        var message: String
        var job: Int64?
    }

    /// A renewal was sent and has not come back.
    var underWay = false
    /// Since when renewals fail (nil: the last one went through).
    var failingSince: ContinuousClock.Instant?
    /// Jobs whose last renewal a locked row held up.
    var heldUp: Set<Int64> = []
    /// Of those, the ones told about (held up twice in a row or more).
    var told: Set<Int64> = []

    /// Notes a renewal's outcome; gives the lines to log.
    mutating func finished(_ result: Result<LeaseRenewal, any Error>, now: ContinuousClock.Instant = .now) -> [Note] {
        underWay = false
        switch result {
        case let .failure(error):
            guard failingSince == nil else { return [] }
            failingSince = now
            return [
                Note(
                    level: .error,
                    message: "could not renew leases: \(error); jobd keeps trying at every renewal (said once: the "
                        + "next line about it is when renewals work again)")
            ]
        case let .success(renewal):
            var notes: [Note] = []
            if let since = failingSince {
                failingSince = nil
                notes.append(
                    Note(
                        level: .notice,
                        message:
                            "leases are renewed again, after \((now - since).components.seconds)s of failed renewals"))
            }
            for id in renewal.heldUp where heldUp.contains(id) && !told.contains(id) {
                notes.append(
                    Note(
                        level: .warning,
                        message:
                            "the lease of job \(id) was not renewed: another database session holds its row locked "
                            + "(a psql session left in a transaction?); it is renewed once the lock is let go, and the "
                            + "job may run again elsewhere if the lock outlasts the lease",
                        job: id))
            }
            let renewedAgain = told.intersection(renewal.renewed.map(\.jobID))
            for id in renewedAgain.sorted() {
                notes.append(
                    Note(
                        level: .notice, message: "the lease of job \(id) is renewed again: its row is no longer locked",
                        job: id))
            }
            let now = Set(renewal.heldUp)
            told = told.union(heldUp).intersection(now)
            heldUp = now
            return notes
        }
    }
}
