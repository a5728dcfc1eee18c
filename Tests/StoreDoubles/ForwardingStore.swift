import Foundation
import JobStore

/// What an engine uses of a store (the same four protocols as JobEngine's
/// `EngineStore`).
public typealias EngineStoreParts = JobReadStore & JobRunStore & JobScheduleStore & JobChildStore

/// A test double of an engine's store that hands every call to
/// ``forwardee``: a double conforms and implements only the calls it
/// changes, so a new store requirement is forwarded here once rather than
/// in every double.
public protocol ForwardingStore: EngineStoreParts {
    var forwardee: any EngineStoreParts { get }
}

extension ForwardingStore {
    // MARK: JobRunStore

    public func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        forwardee.claim(
            pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow, completion: completion)
    }

    public func renew(
        _ leases: [Lease], leaseDuration: Duration,
        completion: @escaping @Sendable (Result<LeaseRenewal, any Error>) -> Void
    ) {
        forwardee.renew(leases, leaseDuration: leaseDuration, completion: completion)
    }

    public func requeueExpiredLeases(
        sparing: [Lease], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void
    ) {
        forwardee.requeueExpiredLeases(sparing: sparing, completion: completion)
    }

    public func recordStageStart(
        _ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        forwardee.recordStageStart(start, completion: completion)
    }

    public func recordStageResult(
        _ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        forwardee.recordStageResult(result, completion: completion)
    }

    public func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        forwardee.finish(finish, completion: completion)
    }

    public func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        forwardee.recordEvent(event, completion: completion)
    }

    public func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void) {
        forwardee.nextRunAt(pool: pool, completion: completion)
    }

    public func nextRateSlot(
        pool: String, flow: ClaimFlow, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void
    ) {
        forwardee.nextRateSlot(pool: pool, flow: flow, completion: completion)
    }

    public func databaseTime() async throws -> DatabaseTime { try await forwardee.databaseTime() }

    public func wakeUps() -> AsyncStream<StoreWakeUp> { forwardee.wakeUps() }

    // MARK: JobReadStore

    public func job(_ id: Int64) async throws -> JobDetail? { try await forwardee.job(id) }

    public func list(_ query: JobQuery) async throws -> JobPage { try await forwardee.list(query) }

    public func events(of jobID: Int64) async throws -> [JobEvent] { try await forwardee.events(of: jobID) }

    public func attemptHistory(of jobID: Int64) async throws -> [JobAttempt] {
        try await forwardee.attemptHistory(of: jobID)
    }

    public func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        try await forwardee.countJobs(in: states)
    }

    public func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        try await forwardee.resolvedPerMinute(from: start, to: end)
    }

    public func jobCountsByPool() async throws -> [PoolJobCounts] { try await forwardee.jobCountsByPool() }

    public func waitReasons(of ids: [Int64], rules: WaitRules) async throws -> [Int64: WaitReason] {
        try await forwardee.waitReasons(of: ids, rules: rules)
    }

    public func waitingJobCounts(rules: WaitRules) async throws -> [WaitReason.Code: Int] {
        try await forwardee.waitingJobCounts(rules: rules)
    }

    public func jobPage(_ query: JobPageQuery) async throws -> JobPageRead? { try await forwardee.jobPage(query) }

    public func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data? {
        try await forwardee.jobValue(id, place)
    }

    // MARK: JobScheduleStore

    public func scheduleMarks() async throws -> [ScheduleMark] { try await forwardee.scheduleMarks() }

    public func startSchedule(definition: String, schedule: String, at: Date) async throws -> Date {
        try await forwardee.startSchedule(definition: definition, schedule: schedule, at: at)
    }

    public func fireOccurrence(_ occurrence: ScheduleOccurrence) async throws -> OccurrenceOutcome {
        try await forwardee.fireOccurrence(occurrence)
    }

    public func skipOccurrences(definition: String, schedule: String, through: Date) async throws -> Bool {
        try await forwardee.skipOccurrences(definition: definition, schedule: schedule, through: through)
    }

    public func latestScheduledJobs() async throws -> [String: Job] { try await forwardee.latestScheduledJobs() }

    // MARK: JobChildStore

    public func joinChildren(
        _ join: ChildJoin, completion: @escaping @Sendable (Result<ChildJoinOutcome, any Error>) -> Void
    ) {
        forwardee.joinChildren(join, completion: completion)
    }

    public func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        try await forwardee.children(of: parentID, limit: limit)
    }
}
