import Dispatch
internal import GRDB
import Locking
import Synchronization

/// Group commit: every write of the store goes through here, and writes
/// that arrive while a transaction is running are committed together in the
/// next one.
///
/// - A write is a closure run inside a `BEGIN IMMEDIATE` transaction on
///   GRDB's writer queue. Its completion is called only after that
///   transaction committed (or with the reason it did not).
/// - One failing write does not fail the others of its transaction: a
///   multi-statement write runs in a savepoint that is rolled back alone, and
///   a single statement is undone by SQLite alone. Only an error that makes
///   SQLite roll back the whole transaction (I/O, disk full, busy) fails
///   every write in it — none of them was written.
/// - Nothing blocks waiting: the first write into an idle writer schedules a
///   transaction on the writer queue; the transaction takes everything queued
///   (up to a cap), and schedules another if more arrived meanwhile.
/// - Completions run right after the commit, on the writer's thread, in the
///   order the writes were made, before the next transaction starts: writes
///   that completions make (the next step of a job) join that next
///   transaction at once, and no thread hop is paid per transaction.
///   Completions must therefore be quick and never block — hop to a queue
///   of your own for real work.
final class GroupCommitWriter: Sendable {
    struct Write: Sendable {
        /// Runs several statements: wrap it in a savepoint.
        let atomic: Bool
        /// Does the work; returns what to call once the work is committed.
        let run: @Sendable (Database) throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var queue: [Write] = []
        var scheduled = false
        var closed = false
        var transactions = 0
        var writes = 0
    }

    /// Transactions committed (or tried) and writes they held, since the start.
    var statistics: (transactions: Int, writes: Int) {
        state.withAnnouncedLock { ($0.transactions, $0.writes) }
    }

    private let state = Mutex(State())
    private let pool: any DatabaseWriter
    private let completions = DispatchQueue(label: "jobstore.completions")
    private let maxPerTransaction: Int
    private let path: String

    /// Called with each committed transaction's duration (metrics).
    private let onCommit: (@Sendable (Duration) -> Void)?

    init(pool: any DatabaseWriter, path: String, maxPerTransaction: Int, onCommit: (@Sendable (Duration) -> Void)? = nil) {
        self.onCommit = onCommit
        self.pool = pool
        self.path = path
        self.maxPerTransaction = max(1, maxPerTransaction)
    }

    func enqueue<T: Sendable>(
        atomic: Bool,
        _ body: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let write = Write(
            atomic: atomic,
            run: { db in
                let value = try body(db)
                return { completion(.success(value)) }
            },
            fail: { completion(.failure($0)) })
        let (accepted, mustSchedule) = state.withAnnouncedLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.queue.append(write)
            if state.scheduled { return (true, false) }
            state.scheduled = true
            return (true, true)
        }
        if !accepted {
            let error = JobStoreError(.closed, "the job store for \(path) was closed; nothing was written")
            completions.async { completion(.failure(error)) }
        } else if mustSchedule {
            schedule()
        }
    }

    /// Refuses new writes; those already queued still run.
    func close() {
        state.withAnnouncedLock { $0.closed = true }
    }

    private func schedule() {
        pool.asyncWriteWithoutTransaction { db in
            self.runTransaction(db)
        }
    }

    private func runTransaction(_ db: Database) {
        let batch = state.withAnnouncedLock { state -> [Write] in
            let count = min(state.queue.count, maxPerTransaction)
            let batch = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            state.transactions += 1
            state.writes += count
            return batch
        }
        var deliveries: [@Sendable () -> Void] = []
        deliveries.reserveCapacity(batch.count)
        let began = ContinuousClock.now
        do {
            // Prepared once per connection (GRDB's `inTransaction` parses
            // BEGIN and COMMIT anew each time).
            try RawStatement(db, "BEGIN IMMEDIATE").execute()
            for write in batch {
                do {
                    deliveries.append(try Self.run(write, db))
                } catch {
                    // SQLite already rolled the whole transaction back:
                    // nothing of this batch is written.
                    if !db.isInsideTransaction { throw error }
                    let wrapped = JobStoreError.wrap(error, path: path, doing: "write")
                    deliveries.append { write.fail(wrapped) }
                }
            }
            try RawStatement(db, "COMMIT").execute()
            onCommit?(ContinuousClock.now - began)
        } catch {
            if db.isInsideTransaction {
                _ = try? RawStatement(db, "ROLLBACK").execute()
            }
            let wrapped = JobStoreError.wrap(error, path: path, doing: "commit a transaction")
            deliveries = batch.map { write in { write.fail(wrapped) } }
        }
        // `scheduled` is still set: writes made by these completions queue
        // up for the next transaction without scheduling one each.
        for deliver in deliveries { deliver() }
        let more = state.withAnnouncedLock { state -> Bool in
            if state.queue.isEmpty {
                state.scheduled = false
                return false
            }
            return true
        }
        if more { schedule() }
    }

    private static func run(_ write: Write, _ db: Database) throws -> @Sendable () -> Void {
        guard write.atomic else { return try write.run(db) }
        var delivery: (@Sendable () -> Void)?
        try db.inSavepoint {
            delivery = try write.run(db)
            return .commit
        }
        return delivery!
    }
}
