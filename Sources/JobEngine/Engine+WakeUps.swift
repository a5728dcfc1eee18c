import Foundation
import JobStore
import Logging

extension Engine {
    /// Acts on what the store hears from other processes (``JobRunStore/wakeUps()``)
    /// until the calling task is cancelled or the stream ends:
    ///
    /// - `.runnable(pool)`: that pool claims now (and, if nothing is
    ///   runnable yet, reads its next `run_at` again for a delayed job);
    /// - `.cancellationRequested(id)`: job `id`, if it runs here, stops now
    ///   and ends `cancelled`;
    /// - `.schedulesChanged` (a schedule's pause ended): the schedules are
    ///   looked at now;
    /// - `.resync` (wake-ups may have been lost, the store reconnected):
    ///   every pool claims and the leases are renewed now.
    ///
    /// The timers stay: a lost wake-up delays work until the next poll or
    /// renewal, never loses it. A store without wake-ups (SQLite) never
    /// yields, and this waits until cancelled. Call it after ``start()``.
    public func followWakeUps() async {
        for await wakeUp in context.store.wakeUps() {
            handle(wakeUp)
        }
    }

    /// Job `id`'s cancellation was requested in the store (jobctl says so
    /// over the control socket): if it runs here, it stops now rather than
    /// at the next lease renewal.
    public func cancellationRequested(_ id: Int64) {
        handle(.cancellationRequested(jobID: id))
    }

    func handle(_ wakeUp: StoreWakeUp) {
        switch wakeUp {
        case let .runnable(pool):
            pools[pool]?.fill()
        case let .cancellationRequested(id):
            let runs = runs(of: id)
            guard !runs.isEmpty else { return }
            context.log(.info, "cancellation requested: stopping the job", job: id)
            for run in runs { run.stop(EngineError(.cancelled, "cancelled: a cancellation was requested", jobID: id)) }
        case .schedulesChanged:
            lookAtSchedules()
        case .resync:
            context.log(
                .notice,
                "wake-ups from other hosts resumed (the LISTEN connection to the database was lost and is made again; what was sent meanwhile is made up for): claiming and renewing leases now"
            )
            nudge()
            renewLeases()
        }
    }
}
