import Foundation
import JobStore
import Locking
internal import Logging
internal import PostgresNIO
import Synchronization

/// Wake-ups across hosts: `NOTIFY` on one channel per schema, `LISTEN` on
/// a connection of its own (not from the pool: a pooled connection would
/// be lent to others, and a transaction-pooling PgBouncer cannot LISTEN).
///
/// Payloads: `queued POOL` (a submit, a retry, a requeue: claim now, and
/// read `nextRunAt` again), `cancel ID` (a cancellation of a running job),
/// `schedules` (a schedule's pause ended: look at the schedules).
enum PostgresWakeUps {
    static func channel(schema: String) -> String { "jobd_" + schema }

    static func payload(_ wakeUp: StoreWakeUp) -> String {
        switch wakeUp {
        case let .runnable(pool): "queued " + pool
        case let .cancellationRequested(id): "cancel \(id)"
        case .resync: "resync"
        case .schedulesChanged: "schedules"
        }
    }

    static func wakeUp(_ payload: String) -> StoreWakeUp? {
        if payload.hasPrefix("queued ") { return .runnable(pool: String(payload.dropFirst(7))) }
        if payload == "schedules" { return .schedulesChanged }
        if payload.hasPrefix("cancel "), let id = Int64(payload.dropFirst(7)) {
            return .cancellationRequested(jobID: id)
        }
        return payload == "resync" ? .resync : nil
    }
}

/// Keeps a LISTEN connection up and hands what it hears to every stream
/// ``PostgresJobStore/wakeUps()`` gave out. After a reconnect it says
/// ``StoreWakeUp/resync``: what was sent meanwhile was lost.
final class PostgresWakeUpListener: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<StoreWakeUp>.Continuation] = [:]
        var nextID = 0
        var listening = false
        var connections = 0
    }

    private let state = Mutex(State())
    private let channel: String
    /// How long a ping may go unanswered before the connection counts as silent.
    private let silence: Duration
    private let logger: Logger

    /// How often the LISTEN connection is pinged: a connection that went
    /// silent (a network path that stopped passing data without closing it)
    /// would otherwise never be heard from again, nor noticed.
    static let pingInterval = Duration.seconds(15)

    init(channel: String, silence: Duration, logger: Logger) {
        self.channel = channel
        self.silence = silence
        self.logger = logger
    }

    /// Whether the LISTEN connection is up, and how many times it was made.
    var status: (listening: Bool, connections: Int) {
        state.withAnnouncedLock { ($0.listening, $0.connections) }
    }

    func stream() -> AsyncStream<StoreWakeUp> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: StoreWakeUp.self, bufferingPolicy: .bufferingNewest(256))
        let id = state.withAnnouncedLock { state -> Int in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withAnnouncedLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    private func broadcast(_ wakeUp: StoreWakeUp) {
        let subscribers = state.withAnnouncedLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(wakeUp) }
    }

    /// Hands what `connection` hears to the streams, until it fails.
    private func listen(on connection: PostgresConnection) async throws {
        try await connection.listen(on: channel) { notifications in
            let reconnected = state.withAnnouncedLock { state -> Bool in
                state.listening = true
                state.connections += 1
                return state.connections > 1
            }
            if reconnected { broadcast(.resync) }
            for try await notification in notifications {
                if let wakeUp = PostgresWakeUps.wakeUp(notification.payload) { broadcast(wakeUp) }
            }
        }
    }

    /// A round trip on `connection` every ``pingInterval``, told to `clock`.
    private static func ping(_ connection: PostgresConnection, clock: StatementClock, logger: Logger) async throws {
        var session = PostgresSession(connection: connection, schema: "", logger: logger)
        session.clock = clock
        while true {
            try await Task.sleep(for: pingInterval)
            try await session.execute("SELECT 1")
        }
    }

    /// Listens until cancelled, reconnecting with a backoff (0.1 s doubling
    /// to 5 s); then ends every stream.
    func run(connect: @escaping @Sendable () async throws -> PostgresConnection) async {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let connection = try await connect()
                backoff = .milliseconds(100)
                do {
                    // Should the connection close with LISTEN left
                    // unanswered, or a ping stay unanswered, it is given up
                    // on and another one made.
                    try await connection.watched(
                        silence: silence,
                        lost: {
                            JobStoreError(.unavailable, "the LISTEN connection closed with LISTEN unanswered")
                        },
                        silent: { [silence] in
                            JobStoreError(.unavailable, "the LISTEN connection sent no answer to a ping for \(silence)")
                        }
                    ) { [self] connection, clock in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask { try await self.listen(on: connection) }
                            group.addTask { try await Self.ping(connection, clock: clock, logger: self.logger) }
                            // Either ends only by an error (or cancellation): the other goes with it.
                            defer { group.cancelAll() }
                            try await group.next()
                        }
                    }
                } catch {
                    if !Task.isCancelled {
                        logger.warning("jobd: LISTEN connection lost: \(String(reflecting: error))")
                    }
                }
                try? await connection.close()
            } catch {
                logger.debug("jobd: cannot open the LISTEN connection: \(error)")
            }
            state.withAnnouncedLock { $0.listening = false }
            do { try await Task.sleep(for: backoff) } catch { break }
            backoff = min(backoff * 2, .seconds(5))
        }
        let subscribers = state.withAnnouncedLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
