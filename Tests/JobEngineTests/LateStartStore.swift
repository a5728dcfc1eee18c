import Foundation
import JobEngine
import JobStore
import JobStoreSQLite
import Synchronization

/// A store that lets every call through to `base`, except stage starts:
/// those fail as `unavailable` (a dropped connection) until a job has been
/// finished, and only then go through — a start made again that arrives
/// after its own job's end.
final class LateStartStore: EngineStore {
    let base: any JobStore
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

    // Everything else as `base` does it.

    func submit(_ jobs: [NewJob]) async throws -> [Submission] { try await base.submit(jobs) }
    func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        base.claim(
            pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow, completion: completion)
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

    func joinChildren(
        _ join: ChildJoin, completion: @escaping @Sendable (Result<ChildJoinOutcome, any Error>) -> Void
    ) {
        base.joinChildren(join, completion: completion)
    }

    func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        try await base.children(of: parentID, limit: limit)
    }
}
