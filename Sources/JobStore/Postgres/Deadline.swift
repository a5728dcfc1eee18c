import Synchronization

/// Runs `body`, and gives up on it after `timeout`: the caller gets
/// `timedOut()` and `body`'s task is cancelled (a wait for a pooled
/// connection ends at once; a query already sent finishes on its own).
func withDeadline<T: Sendable>(
    _ timeout: Duration, timedOut: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, timeout: timeout, timedOut: timedOut, body)
        }
    } onCancel: {
        race.cancel()
    }
}

/// The first of the work and the timer to finish resumes the caller.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())

    func start(
        _ continuation: CheckedContinuation<T, any Error>, timeout: Duration,
        timedOut: @escaping @Sendable () -> any Error, _ body: @escaping @Sendable () async throws -> T
    ) {
        state.withLock { $0.continuation = continuation }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            self.finish(with: result)
        }
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            self.finish(with: .failure(timedOut()))
        }
        let (finished, cancelled) = state.withLock { state in
            state.work = work
            state.timer = timer
            return (state.continuation == nil, state.cancelled)
        }
        if finished { timer.cancel() }
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
