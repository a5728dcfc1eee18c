import JobStore
import Locking
internal import NIOCore
internal import PostgresNIO
import Synchronization

extension PostgresClient {
    /// Runs `body` on a pooled connection (set up by `settings` on its first
    /// use), and gives up on it in three cases:
    ///
    /// - No connection within `timeout`: the caller gets `noConnection()`
    ///   (the wait for a pooled connection ends at once).
    /// - The connection closes while `body` still waits: the caller gets
    ///   `lost()` within about a second.
    /// - A statement `body` sent stays unanswered for longer than
    ///   `silence`: the connection is closed (the pool drops it) and the
    ///   caller gets `silent()`. A network path that stops passing data
    ///   without closing the connection (a NAT or a proxy that dropped its
    ///   state, a failover behind a virtual address) looks like this; the
    ///   server itself answers every statement within its
    ///   `statement_timeout`, shorter than `silence`. Time between
    ///   statements does not count: a transaction of a thousand submits may
    ///   take long, each statement of it may not.
    ///
    /// The last two guard against a query that is never answered:
    /// PostgresNIO 1.33.2 can leave a query sent just as the server goes
    /// away waiting for ever, on a connection already closed. Given up on,
    /// such a query stays suspended (a task, and a pool lease the pool has
    /// already dropped with the connection); the caller goes on.
    func withWatchedConnection<T: Sendable>(
        waitingAtMost timeout: Duration, silence: Duration, settings: PostgresConnectionSettings,
        noConnection: @escaping @Sendable () -> any Error, lost: @escaping @Sendable () -> any Error,
        silent: @escaping @Sendable () -> any Error,
        _ body: @escaping @Sendable (PostgresConnection, StatementClock) async throws -> T
    ) async throws -> T {
        try await withDeadline(timeout, timedOut: noConnection, lost: lost) { deadline in
            try await self.withConnection { connection in
                let clock = StatementClock()
                deadline.watch(
                    { connection.isClosed },
                    silence: Silence(clock: clock, bound: silence, error: silent) {
                        let _: EventLoopFuture<Void> = connection.close()
                    })
                try await settings.prepare(connection, clock: clock)
                return try await body(connection, clock)
            }
        }
    }
}

extension PostgresConnection {
    /// Runs `body` on this connection, given up on (with `lost()`) should
    /// the connection close while `body` still waits, and (with `silent()`,
    /// the connection closed) should a statement sent with `clock` stay
    /// unanswered for longer than `silence`, as above.
    func watched<T: Sendable>(
        silence: Duration, lost: @escaping @Sendable () -> any Error, silent: @escaping @Sendable () -> any Error,
        _ body: @escaping @Sendable (PostgresConnection, StatementClock) async throws -> T
    ) async throws -> T {
        try await withDeadline(nil, timedOut: lost, lost: lost) { deadline in
            let clock = StatementClock()
            deadline.watch(
                { self.isClosed },
                silence: Silence(clock: clock, bound: silence, error: silent) {
                    let _: EventLoopFuture<Void> = self.close()
                })
            return try await body(self, clock)
        }
    }
}

/// When the statement a session sent and has no answer to yet was sent.
package final class StatementClock: Sendable {
    private let sentAt = Mutex<ContinuousClock.Instant?>(nil)

    func sent() {
        sentAt.withAnnouncedLock { $0 = .now }
    }

    func answered() {
        sentAt.withAnnouncedLock { $0 = nil }
    }

    /// How long the statement in flight has waited for its answer; nil when none is in flight.
    var waiting: Duration? {
        sentAt.withAnnouncedLock { sent in sent.map { .now - $0 } }
    }
}

/// How long a statement on a watched connection may stay unanswered, and
/// what then happens.
struct Silence: Sendable {
    let clock: StatementClock
    let bound: Duration
    /// The caller's error.
    let error: @Sendable () -> any Error
    /// Closes the connection given up on.
    let close: @Sendable () -> Void
}

/// Runs `body`, and gives up on it after `timeout` (nil: no timer) unless
/// `body` switched the race to watching its connection with
/// ``Deadline/watch(_:silence:)`` by then: the caller gets `timedOut()` and
/// `body`'s task is cancelled. Once watching, the caller gets `lost()`
/// should the connection be found closed twice in a row while `body` still
/// waits, or the silence's error should a statement stay unanswered too long.
func withDeadline<T: Sendable>(
    _ timeout: Duration?, timedOut: @escaping @Sendable () -> any Error,
    lost: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable (Deadline) async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, timeout: timeout, timedOut: timedOut, lost: lost, body)
        }
    } onCancel: {
        race.cancel()
    }
}

/// Lets the work switch the race from the timer to watching its connection.
struct Deadline: Sendable {
    /// How often a watched connection is looked at (more often for a silence bound under 2 s).
    static let watchInterval: Duration = .milliseconds(500)

    fileprivate let start: @Sendable (_ isClosed: @escaping @Sendable () -> Bool, _ silence: Silence?) -> Void

    /// From now on, the race watches the connection instead of the timer.
    func watch(_ isClosed: @escaping @Sendable () -> Bool, silence: Silence? = nil) {
        start(isClosed, silence)
    }
}

/// The first of the work, the timer and the watch to finish resumes the caller.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var cancelled = false
        var watching = false
    }

    private let state = Mutex(State())

    func start(
        _ continuation: CheckedContinuation<T, any Error>, timeout: Duration?,
        timedOut: @escaping @Sendable () -> any Error, lost: @escaping @Sendable () -> any Error,
        _ body: @escaping @Sendable (Deadline) async throws -> T
    ) {
        state.withAnnouncedLock { $0.continuation = continuation }
        let deadline = Deadline { [self] isClosed, silence in
            let watcher = Task { await self.watch(isClosed, silence: silence, lost: lost) }
            let (timer, finished) = state.withAnnouncedLock { state in
                state.watching = true
                defer { state.timer = watcher }
                return (state.timer, state.continuation == nil)
            }
            timer?.cancel()
            if finished { watcher.cancel() }
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body(deadline)) } catch { result = .failure(error) }
            self.finish(with: result)
        }
        let timer = timeout.map { timeout in
            Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                guard !self.state.withAnnouncedLock({ $0.watching }) else { return }
                self.finish(with: .failure(timedOut()))
            }
        }
        let (finished, cancelled, watching) = state.withAnnouncedLock { state in
            state.work = work
            if !state.watching { state.timer = timer }
            return (state.continuation == nil, state.cancelled, state.watching)
        }
        if finished || watching { timer?.cancel() }
        if cancelled { work.cancel() }
    }

    /// Looks at the connection until the race is over.
    private func watch(_ isClosed: @Sendable () -> Bool, silence: Silence?, lost: @Sendable () -> any Error) async {
        let interval = silence.map { min(Deadline.watchInterval, $0.bound / 4) } ?? Deadline.watchInterval
        // Closed at two looks in a row: a query still waiting then was
        // not failed with the connection, and never will be.
        var closedBefore = false
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            let closed = isClosed()
            if closed && closedBefore { return finish(with: .failure(lost())) }
            closedBefore = closed
            if let silence, let waited = silence.clock.waiting, waited > silence.bound {
                silence.close()
                return finish(with: .failure(silence.error()))
            }
        }
    }

    func cancel() {
        let work = state.withAnnouncedLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }

    private func finish(with result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withAnnouncedLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        guard let continuation else { return }
        work?.cancel()
        timer?.cancel()
        continuation.resume(with: result)
    }
}
