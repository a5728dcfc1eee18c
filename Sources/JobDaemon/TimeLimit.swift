import Locking
import Synchronization

/// Waits for `body` at most `limit`: its value, or nil when it took longer.
/// `body` is not cancelled then: it goes on by itself (a store call waiting
/// for a server that is down ends with its own timeout), unwaited for.
func awaitAtMost<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
    let first = FirstAnswer<T?>()
    return await withCheckedContinuation { continuation in
        first.set(continuation)
        let timer = Task {
            try? await Task.sleep(for: limit)
            first.answer(nil)
        }
        Task {
            first.answer(await body())
            timer.cancel()
        }
    }
}

/// Resumes its continuation with the first answer given; later ones are dropped.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<T, Never>) {
        self.continuation.withAnnouncedLock { $0 = continuation }
    }

    func answer(_ value: T) {
        let waiting = continuation.withAnnouncedLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
