import Dispatch
internal import GRDB
import JobStore
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
/// - A write about a `Key` may be *deferred*: it is held back for
///   `deferral`, then queued like any other. A later write about the same
///   key supersedes it while it is held: the held one is dropped and its
///   completion told it succeeded (the later write records what it would
///   have; its own failure is its caller's to handle). An idempotent
///   stage's start is deferred and its result has the same key: a stage
///   shorter than the deferral costs one write, not two.
final class GroupCommitWriter: Sendable {
    struct Write: Sendable {
        /// Runs several statements: wrap it in a savepoint.
        let atomic: Bool
        /// Does the work; returns what to call once the work is committed.
        let run: @Sendable (Database) throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    /// What a write is about (a stage of a job).
    struct Key: Hashable, Sendable {
        var job: Int64
        var position: Int
    }

    /// A deferred write, held back until `due`.
    private struct Held {
        var key: Key
        var write: Write
        var due: DispatchTime
        var completion: @Sendable (Result<Void, any Error>) -> Void
    }

    private struct State {
        var queue: [Write] = []
        /// Deferred writes, in the order they came (so by `due`).
        var held: [Held] = []
        var scheduled = false
        /// A timer will queue the held writes that are due.
        var timerArmed = false
        var closed = false
        var transactions = 0
        var writes = 0
        var searchIndexResets = 0

        /// Queues `writes`; whether a transaction must be scheduled for them.
        mutating func append(_ writes: some Collection<Write>) -> Bool {
            guard !writes.isEmpty else { return false }
            queue += writes
            if scheduled { return false }
            scheduled = true
            return true
        }

        /// Queues the first `count` held writes; whether a transaction must be scheduled.
        mutating func queueHeld(first count: Int) -> Bool {
            defer { held.removeFirst(count) }
            return append(held.prefix(count).map(\.write))
        }
    }

    /// Transactions committed (or tried) and writes they held, since the start.
    var statistics: (transactions: Int, writes: Int) {
        state.withAnnouncedLock { ($0.transactions, $0.writes) }
    }

    /// Times the writer's connection let go of its search-index state
    /// (``searchIndexMayHaveGrown()``), since the start.
    var searchIndexResets: Int { state.withAnnouncedLock { $0.searchIndexResets } }

    private let state = Mutex(State())
    /// Set by a write of the transaction under way (on the writer's thread).
    private let searchIndexGrew = Atomic<Bool>(false)
    private let pool: any DatabaseWriter
    private let completions = DispatchQueue(label: "jobstore.completions")
    private let maxPerTransaction: Int
    private let path: String

    /// Called with each committed transaction's duration (metrics).
    private let onCommit: (@Sendable (Duration) -> Void)?

    /// How long a deferred write is held back, and a quarter of it.
    private let deferral: DispatchTimeInterval
    private let quarter: DispatchTimeInterval

    init(
        pool: any DatabaseWriter, path: String, maxPerTransaction: Int, deferral: Duration,
        onCommit: (@Sendable (Duration) -> Void)? = nil
    ) {
        self.onCommit = onCommit
        let microseconds = Int(max(0, deferral / .microseconds(1)))
        self.deferral = .microseconds(microseconds)
        quarter = .microseconds(microseconds / 4)
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
            return (true, state.append(CollectionOfOne(write)))
        }
        if !accepted {
            refuse { completion(.failure($0)) }
        } else if mustSchedule {
            schedule()
        }
    }

    /// A write about `key`, held back for the deferral when `deferred`.
    /// Supersedes a deferred write about `key` still held.
    func enqueue(
        key: Key, deferred: Bool, _ body: @escaping @Sendable (Database) throws -> Void,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        let write = Write(
            atomic: false,
            run: { db in
                try body(db)
                return { completion(.success(())) }
            },
            fail: { completion(.failure($0)) })
        enum Next { case refuse, nothing, schedule, armTimer }
        var superseded: (@Sendable (Result<Void, any Error>) -> Void)?
        let next = state.withAnnouncedLock { state -> Next in
            guard !state.closed else { return .refuse }
            if let index = state.held.firstIndex(where: { $0.key == key }) {
                superseded = state.held.remove(at: index).completion
            }
            guard deferred else { return state.append(CollectionOfOne(write)) ? .schedule : .nothing }
            state.held.append(Held(key: key, write: write, due: .now() + deferral, completion: completion))
            if state.timerArmed { return .nothing }
            state.timerArmed = true
            return .armTimer
        }
        // Outside the lock: a completion may write again.
        superseded?(.success(()))
        switch next {
        case .refuse: refuse { completion(.failure($0)) }
        case .nothing: break
        case .schedule: schedule()
        case .armTimer: armTimer(at: .now() + deferral)
        }
    }

    /// Queues every held write now (a flush or a close must not leave one behind).
    func releaseHeld() {
        let mustSchedule = state.withAnnouncedLock { $0.queueHeld(first: $0.held.count) }
        if mustSchedule { schedule() }
    }

    private func armTimer(at due: DispatchTime) {
        completions.asyncAfter(deadline: due) { self.heldAreDue() }
    }

    /// Queues the held writes that are due (or nearly: those due within a
    /// quarter of the deferral join them, so that held writes go in groups),
    /// and arms the timer for the next one.
    private func heldAreDue() {
        let (mustSchedule, nextDue) = state.withAnnouncedLock { state -> (Bool, DispatchTime?) in
            let horizon = DispatchTime.now() + quarter
            let mustSchedule = state.queueHeld(first: state.held.prefix { $0.due <= horizon }.count)
            let nextDue = state.held.first?.due
            state.timerArmed = nextDue != nil
            return (mustSchedule, nextDue)
        }
        if mustSchedule { schedule() }
        if let nextDue { armTimer(at: nextDue) }
    }

    private func refuse(_ completion: @escaping @Sendable (JobStoreError) -> Void) {
        let error = JobStoreError(.closed, "the job store for \(path) was closed; nothing was written")
        completions.async { completion(error) }
    }

    /// Refuses new writes; those already queued (or held) still run.
    func close() {
        releaseHeld()
        state.withAnnouncedLock { $0.closed = true }
    }

    /// Called by a write, inside its transaction, that put a value of
    /// ``SearchIndexReset/bytes`` or more through the search index: once the
    /// transaction has ended, the connection drops its FTS5 state, whose
    /// hash table would otherwise stay as large as that value's terms
    /// (SearchIndexReset.swift).
    func searchIndexMayHaveGrown() {
        searchIndexGrew.store(true, ordering: .relaxed)
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
        // Rolled back or not, the hash table grew.
        if searchIndexGrew.exchange(false, ordering: .relaxed), SearchIndexReset.run(db) {
            state.withAnnouncedLock { $0.searchIndexResets += 1 }
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
