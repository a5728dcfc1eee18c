import Foundation
import JobEngine
import JobStore
import JobStoreSQLite
import Synchronization

/// A SQLite store whose stage-log writes wait, while `held`, until
/// `release()`; everything else goes straight through. A follower that sees
/// a line meanwhile got it from the engine, not from the database.
final class HeldLogStore: EngineStore, StageLogStore {
    let base: SQLiteJobStore
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

    // Everything else as `base` does it.

    func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        base.recordStageStart(start, completion: completion)
    }
    func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        base.finish(finish, completion: completion)
    }
    func submit(_ jobs: [NewJob]) async throws -> [Submission] { try await base.submit(jobs) }
    func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        base.claim(
            pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow, completion: completion)
    }
    func joinChildren(
        _ join: ChildJoin, completion: @escaping @Sendable (Result<ChildJoinOutcome, any Error>) -> Void
    ) {
        base.joinChildren(join, completion: completion)
    }
    func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        try await base.children(of: parentID, limit: limit)
    }
    func renew(
        _ leases: [Lease], leaseDuration: Duration,
        completion: @escaping @Sendable (Result<LeaseRenewal, any Error>) -> Void
    ) {
        base.renew(leases, leaseDuration: leaseDuration, completion: completion)
    }
    func requeueExpiredLeases(sparing: [Lease], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void) {
        base.requeueExpiredLeases(sparing: sparing, completion: completion)
    }
    func databaseTime() async throws -> DatabaseTime { try await base.databaseTime() }
    func leaseOwners() async throws -> [String: Int] { try await base.leaseOwners() }
    func expireLeases(of owners: [String]) async throws -> Int { try await base.expireLeases(of: owners) }
    func recordStageResult(_ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        base.recordStageResult(result, completion: completion)
    }
    func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        base.recordEvent(event, completion: completion)
    }
    func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void) {
        base.nextRunAt(pool: pool, completion: completion)
    }
    func requestCancellation(of id: Int64) async throws -> CancellationOutcome {
        try await base.requestCancellation(of: id)
    }
    func retry(_ id: Int64, delay: Duration) async throws -> Job { try await base.retry(id, delay: delay) }
    func prune(finishedBefore date: Date) async throws -> Int { try await base.prune(finishedBefore: date) }
    func job(_ id: Int64) async throws -> JobDetail? { try await base.job(id) }
    func list(_ query: JobQuery) async throws -> JobPage { try await base.list(query) }
    func events(of jobID: Int64) async throws -> [JobEvent] { try await base.events(of: jobID) }
    func attemptHistory(of jobID: Int64) async throws -> [JobAttempt] { try await base.attemptHistory(of: jobID) }
    func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] { try await base.countJobs(in: states) }
    func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        try await base.resolvedPerMinute(from: start, to: end)
    }
    func jobCountsByPool() async throws -> [PoolJobCounts] { try await base.jobCountsByPool() }
    func waitReasons(of ids: [Int64], rules: WaitRules) async throws -> [Int64: WaitReason] {
        try await base.waitReasons(of: ids, rules: rules)
    }
    func waitingJobCounts(rules: WaitRules) async throws -> [WaitReason.Code: Int] {
        try await base.waitingJobCounts(rules: rules)
    }
    func jobPage(_ query: JobPageQuery) async throws -> JobPageRead? { try await base.jobPage(query) }
    func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data? {
        try await base.jobValue(id, place)
    }
    func wakeUps() -> AsyncStream<StoreWakeUp> { base.wakeUps() }
    func acquireLeadership(of role: String, owner: String, for duration: Duration) async throws -> Bool {
        try await base.acquireLeadership(of: role, owner: owner, for: duration)
    }
    func releaseLeadership(of role: String, owner: String) async throws {
        try await base.releaseLeadership(of: role, owner: owner)
    }
    func scheduleMarks() async throws -> [ScheduleMark] { try await base.scheduleMarks() }
    func startSchedule(definition: String, schedule: String, at: Date) async throws -> Date {
        try await base.startSchedule(definition: definition, schedule: schedule, at: at)
    }
    func fireOccurrence(_ occurrence: ScheduleOccurrence) async throws -> OccurrenceOutcome {
        try await base.fireOccurrence(occurrence)
    }
    func skipOccurrences(definition: String, schedule: String, through: Date) async throws -> Bool {
        try await base.skipOccurrences(definition: definition, schedule: schedule, through: through)
    }
    func latestScheduledJobs() async throws -> [String: Job] { try await base.latestScheduledJobs() }
}
