import Foundation
import JobEngine
import JobStore
import JobStoreSQLite
import StoreDoubles
import Synchronization

/// A store that lets every call through to `base`, except stage starts:
/// those fail as `unavailable` (a dropped connection) until a job has been
/// finished, and only then go through — a start made again that arrives
/// after its own job's end.
final class LateStartStore: ForwardingStore {
    let base: any JobStore
    var forwardee: any EngineStoreParts { base }
    private let finished = Mutex(false)
    private let refusedStarts = Atomic<Int>(0)
    private let lateStarts = Atomic<Int>(0)

    init(_ base: any JobStore) {
        self.base = base
    }

    /// How many starts were refused before the finish.
    var refused: Int { refusedStarts.load(ordering: .relaxed) }
    /// How many starts made after the finish the base store answered.
    var late: Int { lateStarts.load(ordering: .relaxed) }

    func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        guard finished.withLock({ $0 }) else {
            refusedStarts.add(1, ordering: .relaxed)
            return completion(.failure(JobStoreError(.unavailable, "the connection closed with the query unanswered")))
        }
        base.recordStageStart(start) { result in
            completion(result)
            self.lateStarts.add(1, ordering: .relaxed)
        }
    }

    func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        base.finish(finish) { result in
            if case .success = result { self.finished.withLock { $0 = true } }
            completion(result)
        }
    }
}
