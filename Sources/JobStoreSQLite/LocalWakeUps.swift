import JobStore
import Synchronization

/// Wake-ups that this process's own writes cause — a child's end that makes
/// its parent runnable, a cancellation passed down to running children —
/// told to the engines reading ``SQLiteJobStore/wakeUps()`` once the write
/// has committed. (Writes of other processes are seen by the engines'
/// polls, or jobctl's nudge over the control socket.)
final class LocalWakeUps: Sendable {
    private struct Streams {
        var next = 0
        var continuations: [Int: AsyncStream<StoreWakeUp>.Continuation] = [:]
    }

    private let streams = Mutex(Streams())

    func stream() -> AsyncStream<StoreWakeUp> {
        let (stream, continuation) = AsyncStream<StoreWakeUp>.makeStream()
        let id = streams.withLock { streams -> Int in
            streams.next += 1
            streams.continuations[streams.next] = continuation
            return streams.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.streams.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ wakeUps: [StoreWakeUp]) {
        guard !wakeUps.isEmpty else { return }
        let continuations = streams.withLock { Array($0.continuations.values) }
        for continuation in continuations {
            for wakeUp in wakeUps { continuation.yield(wakeUp) }
        }
    }
}
