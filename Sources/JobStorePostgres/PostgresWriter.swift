import Foundation
import JobStore
import Locking
internal import Logging
internal import PostgresNIO
import Synchronization

/// Group commit on PostgreSQL: the twin of `GroupCommitWriter`, with the
/// same promises.
///
/// - Writes that arrive while a transaction runs go, in order, into the
///   next one (up to a cap), on one pooled connection.
/// - A write's completion is called after its transaction committed (or
///   with why it was not written), in the order the writes were made, before
///   the next transaction starts: writes made by completions join it.
/// - One failing write does not fail the others: a write that throws its own
///   ``JobStoreError`` (a lost lease, a value over the cap) changed nothing
///   (an `atomic` write runs in a savepoint, rolled back alone); a statement
///   the server rejects aborts the transaction, which is then run again
///   without that write. A failed connection fails every write of the
///   transaction with ``JobStoreError/Code/unavailable``.
/// - Stage starts, stage results and finishes (``PostgresBatchedWrite``) that
///   follow each other in a transaction are merged, one statement per kind
///   (``PostgresBatchGroup``). Should the server reject a merged statement, the
///   transaction runs again with those writes one statement each, which
///   finds the one at fault.
final class PostgresWriter: Sendable {
    struct Write: Sendable {
        let atomic: Bool
        /// A write of its own: its statements, then what to deliver.
        let run: (@Sendable (PostgresSession) async throws -> @Sendable () -> Void)?
        /// Or a write merged with others of its kind.
        let batched: PostgresBatchedWrite?
        let succeed: @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var queue: [Write] = []
        var running = false
        var closed = false
        var transactions = 0
        var writes = 0
        /// Called when the queue is next empty (flush).
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let client: PostgresClient
    private let settings: PostgresConnectionSettings
    private let schema: String
    private let target: PostgresTarget
    private let timeout: Duration
    private let silence: Duration
    private let maxPerTransaction: Int
    private let logger: Logger

    init(
        client: PostgresClient, settings: PostgresConnectionSettings, schema: String, target: PostgresTarget,
        timeout: Duration,
        silence: Duration, maxPerTransaction: Int, logger: Logger
    ) {
        self.client = client
        self.settings = settings
        self.schema = schema
        self.target = target
        self.timeout = timeout
        self.silence = silence
        self.maxPerTransaction = max(1, maxPerTransaction)
        self.logger = logger
    }

    var statistics: (transactions: Int, writes: Int) {
        state.withAnnouncedLock { ($0.transactions, $0.writes) }
    }

    func enqueue<T: Sendable>(
        atomic: Bool, _ body: @escaping @Sendable (PostgresSession) async throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let write = Write(
            atomic: atomic,
            run: { session in
                let value = try await body(session)
                return { completion(.success(value)) }
            },
            batched: nil, succeed: {}, fail: { completion(.failure($0)) })
        add(write)
    }

    /// A stage start, stage result or finish, merged with its kind in its transaction.
    func enqueue(_ batched: PostgresBatchedWrite, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        add(
            Write(
                atomic: false, run: nil, batched: batched, succeed: { completion(.success(())) },
                fail: { completion(.failure($0)) }))
    }

    private func add(_ write: Write) {
        let (accepted, start) = state.withAnnouncedLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.queue.append(write)
            if state.running { return (true, false) }
            state.running = true
            return (true, true)
        }
        if !accepted {
            write.fail(JobStoreError(.closed, "the job store for \(target) was closed; nothing was written"))
        } else if start {
            Task { await self.drain() }
        }
    }

    /// The same, awaited.
    func write<T: Sendable>(
        atomic: Bool, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(atomic: atomic, body) { continuation.resume(with: $0) }
        }
    }

    /// Refuses new writes; those queued still run.
    func close() {
        state.withAnnouncedLock { $0.closed = true }
    }

    /// Returns once every write queued before the call has been delivered.
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withAnnouncedLock { state -> Bool in
                if !state.running { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func drain() async {
        while true {
            let (batch, waiters) = state.withAnnouncedLock { state -> ([Write], [CheckedContinuation<Void, Never>]) in
                let count = min(state.queue.count, maxPerTransaction)
                guard count > 0 else {
                    state.running = false
                    defer { state.idleWaiters = [] }
                    return ([], state.idleWaiters)
                }
                let batch = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                state.transactions += 1
                state.writes += count
                return (batch, [])
            }
            guard !batch.isEmpty else {
                for waiter in waiters { waiter.resume() }
                return
            }
            for deliver in await run(batch) { deliver() }
        }
    }

    /// Runs `batch` in one transaction (again without a write the server
    /// rejected, until one commits); returns each write's delivery, in order.
    private func run(_ batch: [Write]) async -> [@Sendable () -> Void] {
        var deliveries = [(@Sendable () -> Void)?](repeating: nil, count: batch.count)
        var remaining = Array(batch.indices)
        // Merged writes of a statement the server rejected: one statement each now.
        var solo: Set<Int> = []
        while !remaining.isEmpty {
            let (attempt, alone) = (remaining, solo)
            do {
                let outcome = try await client.withWatchedConnection(
                    waitingAtMost: timeout, silence: silence, settings: settings,
                    noConnection: { [target, timeout] in
                        JobStoreError.unavailable(target, "write", "no connection within \(timeout)")
                    },
                    lost: { [target] in
                        JobStoreError.unavailable(
                            target, "write", "the connection closed with the transaction unanswered")
                    },
                    silent: { [target, silence] in JobStoreError.silent(target, "write", silence) }
                ) { [self] connection, clock in
                    var session = PostgresSession(connection: connection, schema: schema, logger: logger)
                    session.clock = clock
                    return try await transaction(batch, attempt, solo: alone, session)
                }
                switch outcome {
                case let .committed(done):
                    for (index, delivery) in done { deliveries[index] = delivery }
                    remaining = []
                case let .rejected(index, error):
                    let wrapped = JobStoreError.wrapPostgres(error, target: target, doing: "write")
                    deliveries[index] = { batch[index].fail(wrapped) }
                    remaining.removeAll { $0 == index }
                case let .rejectedGroup(indices):
                    solo.formUnion(indices)
                }
            } catch {
                let wrapped = JobStoreError.wrapPostgres(error, target: target, doing: "commit a transaction")
                for index in remaining { deliveries[index] = { batch[index].fail(wrapped) } }
                remaining = []
            }
        }
        return deliveries.map { $0! }
    }

    private enum Outcome: Sendable {
        case committed([(Int, @Sendable () -> Void)])
        /// The server rejected write `index`'s statement; the transaction was rolled back.
        case rejected(Int, any Error)
        /// The server rejected a statement of merged writes; the transaction was rolled back.
        case rejectedGroup([Int])
    }

    private func transaction(
        _ batch: [Write], _ indices: [Int], solo: Set<Int>, _ session: PostgresSession
    ) async throws -> Outcome {
        try await session.execute("BEGIN")
        do {
            return try await writes(batch, indices, solo: solo, session)
        } catch {
            // Never give the connection back inside a transaction.
            await session.rollBack(after: error)
            throw error
        }
    }

    private func writes(
        _ batch: [Write], _ indices: [Int], solo: Set<Int>, _ session: PostgresSession
    ) async throws -> Outcome {
        var done: [(Int, @Sendable () -> Void)] = []
        done.reserveCapacity(indices.count)
        var group = PostgresBatchGroup()
        /// Runs the merged writes gathered so far; an outcome if the transaction is over.
        func flush() async throws -> Outcome? {
            guard !group.isEmpty else { return nil }
            defer { group = PostgresBatchGroup() }
            do {
                for (index, error) in try await group.run(session) {
                    let write = batch[index]
                    if let error {
                        done.append((index, { write.fail(error) }))
                    } else {
                        done.append((index, write.succeed))
                    }
                }
                return nil
            } catch let error where JobStoreError.isStatementError(error) {
                _ = try? await session.execute("ROLLBACK")
                let indices = group.writes.map(\.index)
                return indices.count == 1 ? .rejected(indices[0], error) : .rejectedGroup(indices)
            }
        }
        for index in indices {
            let write = batch[index]
            if let batched = write.batched {
                if !group.accepts(batched) || solo.contains(index), let outcome = try await flush() { return outcome }
                group.add(batched, index: index)
                if solo.contains(index), let outcome = try await flush() { return outcome }
                continue
            }
            if let outcome = try await flush() { return outcome }
            guard let run = write.run else { continue }
            do {
                if write.atomic { try await session.execute("SAVEPOINT w") }
                let delivery = try await run(session)
                if write.atomic { try await session.execute("RELEASE SAVEPOINT w") }
                done.append((index, delivery))
            } catch let error where JobStoreError.isStatementError(error) {
                _ = try? await session.execute("ROLLBACK")
                return .rejected(index, error)
            } catch let error as JobStoreError {
                // Thrown by the write itself: the transaction is sound.
                if write.atomic { try await session.execute("ROLLBACK TO SAVEPOINT w") }
                done.append((index, { write.fail(error) }))
            }
        }
        if let outcome = try await flush() { return outcome }
        try await session.execute("COMMIT")
        return .committed(done)
    }
}
