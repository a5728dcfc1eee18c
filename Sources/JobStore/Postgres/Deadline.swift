import Synchronization

/// Runs `body`, and gives up on it after `timeout` unless `body` called
/// ``Deadline/disarm()`` by then: the caller gets `timedOut()` and `body`'s
/// task is cancelled (a wait for a pooled connection ends at once).
///
/// The store disarms it once it holds a connection: the timeout bounds the
/// wait for the server, not the work (a transaction of a thousand submits
/// may take longer); a connection the server closes fails its query at once.
func withDeadline<T: Sendable>(
    _ timeout: Duration, timedOut: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable (Deadline) async throws -> T
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

/// Lets the work end the race against the timer.
struct Deadline: Sendable {
    let disarm: @Sendable () -> Void
}

/// The first of the work and the timer to finish resumes the caller.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var cancelled = false
        var disarmed = false
    }

    private let state = Mutex(State())

    func start(
        _ continuation: CheckedContinuation<T, any Error>, timeout: Duration,
        timedOut: @escaping @Sendable () -> any Error, _ body: @escaping @Sendable (Deadline) async throws -> T
    ) {
        state.withLock { $0.continuation = continuation }
        let deadline = Deadline { [self] in
            let timer = state.withLock { state in
                state.disarmed = true
                return state.timer
            }
            timer?.cancel()
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body(deadline)) } catch { result = .failure(error) }
            self.finish(with: result)
        }
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            guard !self.state.withLock({ $0.disarmed }) else { return }
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
