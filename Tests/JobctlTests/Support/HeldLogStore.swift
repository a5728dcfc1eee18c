import Foundation
import JobEngine
import JobStore
import JobStoreSQLite
import StoreDoubles
import Synchronization

/// A SQLite store whose stage-log writes wait, while `held`, until
/// `release()`; everything else goes straight through. A follower that sees
/// a line meanwhile got it from the engine, not from the database.
final class HeldLogStore: ForwardingStore, StageLogStore {
    let base: SQLiteJobStore
    var forwardee: any EngineStoreParts { base }
    private let held = Mutex<[(StageLogBatch, @Sendable (Result<Void, any Error>) -> Void)]?>([])

    init(_ base: SQLiteJobStore) {
        self.base = base
    }

    /// Writes what waited, in order; later writes go through at once.
    func release() {
        let waiting = held.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for (batch, completion) in waiting { base.writeStageLog(batch, completion: completion) }
    }

    func writeStageLog(_ batch: StageLogBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let waits = held.withLock { held -> Bool in
            guard held != nil else { return false }
            held?.append((batch, completion))
            return true
        }
        if !waits { base.writeStageLog(batch, completion: completion) }
    }

    func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry] { try await base.stageLog(query) }
}
