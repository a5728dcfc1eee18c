internal import PostgresNIO
import Synchronization

extension PostgresClient {
    /// Runs `body` on a pooled connection, and gives up on it in two cases:
    ///
    /// - No connection within `timeout`: the caller gets `noConnection()`
    ///   (the wait for a pooled connection ends at once).
    /// - The connection closes while `body` still waits: the caller gets
    ///   `lost()` within about a second. No other bound applies once `body`
    ///   holds the connection (a transaction of a thousand submits may take
    ///   long).
    ///
    /// The second case guards against a query that is never answered:
    /// PostgresNIO 1.33.2 can leave a query sent just as the server goes
    /// away waiting for ever, on a connection already closed. Given up on,
    /// such a query stays suspended (a task, and a pool lease the pool has
    /// already dropped with the connection); the caller goes on.
    func withWatchedConnection<T: Sendable>(
        waitingAtMost timeout: Duration, noConnection: @escaping @Sendable () -> any Error,
        lost: @escaping @Sendable () -> any Error, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withDeadline(timeout, timedOut: noConnection, lost: lost) { deadline in
            try await self.withConnection { connection in
                deadline.watch { connection.isClosed }
                return try await body(connection)
            }
        }
    }
}

extension PostgresConnection {
    /// Runs `body` on this connection, given up on (with `lost()`) should
    /// the connection close while `body` still waits, as above.
    func watched<T: Sendable>(
        lost: @escaping @Sendable () -> any Error, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withDeadline(nil, timedOut: lost, lost: lost) { deadline in
            deadline.watch { self.isClosed }
            return try await body(self)
        }
    }
}

/// Runs `body`, and gives up on it after `timeout` (nil: no timer) unless
/// `body` switched the race to watching its connection with
/// ``Deadline/watch(_:)`` by then: the caller gets `timedOut()` and
/// `body`'s task is cancelled. Once watching, the caller gets `lost()`
/// should the connection be found closed twice in a row while `body` still
/// waits.
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
    /// How often a watched connection is looked at.
    static let watchInterval: Duration = .milliseconds(500)

    let watch: @Sendable (_ isClosed: @escaping @Sendable () -> Bool) -> Void
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
        state.withLock { $0.continuation = continuation }
        let deadline = Deadline { [self] isClosed in
            let watcher = Task {
                // Closed at two looks in a row: a query still waiting then was
                // not failed with the connection, and never will be.
                var closedBefore = false
                while !Task.isCancelled {
                    do { try await Task.sleep(for: Deadline.watchInterval) } catch { return }
                    let closed = isClosed()
                    if closed && closedBefore { self.finish(with: .failure(lost())) }
                    closedBefore = closed
                }
            }
            let (timer, finished) = state.withLock { state in
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
                guard !self.state.withLock({ $0.watching }) else { return }
                self.finish(with: .failure(timedOut()))
            }
        }
        let (finished, cancelled, watching) = state.withLock { state in
            state.work = work
            if !state.watching { state.timer = timer }
            return (state.continuation == nil, state.cancelled, state.watching)
        }
        if finished || watching { timer?.cancel() }
        if cancelled { work.cancel() }
    }

    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }

    private func finish(with result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        guard let continuation else { return }
        work?.cancel()
        timer?.cancel()
        continuation.resume(with: result)
    }
}
