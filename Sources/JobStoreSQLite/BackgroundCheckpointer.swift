import Dispatch
internal import GRDB
import JobStore
import JobValues
import Locking
import Synchronization

/// Copies the WAL back into the database from a connection of its own,
/// every `interval`, so that the writer — which SQLite would otherwise make
/// do it at commit time, fsync included — keeps writing.
///
/// Checkpoints are `PASSIVE`: they never wait for or block writers or
/// readers. The writer's own automatic checkpoint (every ~40 MB of WAL) stays
/// on as a safety net, for when this one cannot keep up or is not running.
final class BackgroundCheckpointer: Sendable {
    private let connection: DatabaseQueue
    private let queue = DispatchQueue(label: "jobstore.checkpointer", qos: .utility)
    private let interval: DispatchTimeInterval
    private let stopped = Mutex(false)

    init(path: String, every interval: Duration, busyTimeout: Duration) throws {
        var configuration = Configuration()
        configuration.label = "jobstore.checkpointer"
        configuration.busyMode = .timeout(busyTimeout.timeInterval)
        connection = try DatabaseQueue(path: path, configuration: configuration)
        self.interval = .milliseconds(Int(max(1, interval.milliseconds)))
        scheduleNext()
    }

    /// No more checkpoints; closes the connection (after the one running, if any).
    ///
    /// On the checkpoints' own queue: a tick that found the checkpointer
    /// running must not find its connection closed (GRDB then hands SQLite a
    /// null handle, and `sqlite3_wal_checkpoint_v2` crashes). Never called
    /// from that queue.
    func stop() {
        queue.sync {
            stopped.withAnnouncedLock { $0 = true }
            try? connection.close()
        }
    }

    private func scheduleNext() {
        queue.asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self, !self.stopped.withAnnouncedLock({ $0 }) else { return }
            // A failed checkpoint is tried again at the next tick; the
            // writer's automatic checkpoint covers a lasting failure.
            _ = try? self.connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            self.scheduleNext()
        }
    }
}
