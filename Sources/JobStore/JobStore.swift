import Foundation

/// Where jobs and their stage results live.
///
/// Nothing here names a database: ``SQLiteJobStore`` keeps one host's jobs
/// in a file, ``PostgresJobStore`` shares one queue among several hosts.
///
/// Two styles of call:
/// - What an engine does while jobs run (claim, renew, requeue, stage starts
///   and results, finishing a job, events) takes a completion handler. These
///   are group committed: many are written in one transaction, and each
///   completion is called only after its transaction committed, with
///   `.success` — or with the reason it was not written. No thread waits for
///   them. Completions are called in the order the calls were made, on the
///   store's writer thread right after the commit: keep them short and never
///   block in them (resolve a promise, hop to your own queue). A write made
///   from a completion joins the very next transaction. `async` versions are
///   in an extension.
/// - Everything else (submitting, controlling, reading) is `async`.
///
/// Errors are ``JobStoreError``s.
public protocol JobStore: Sendable {
    // MARK: Submitting

    /// Submits jobs in one transaction: all are stored or none is.
    /// Returns one ``Submission`` per job, in order.
    func submit(_ jobs: [NewJob]) async throws -> [Submission]

    // MARK: Running

    /// Claims up to `limit` runnable jobs of `pool` — pending, `runAt` past —
    /// highest priority first, then the longest waiting (earliest `runAt`);
    /// each under a lease of `owner` that expires after `leaseDuration`
    /// unless renewed.
    func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void)

    /// Extends the leases that are still held; tells which were lost and
    /// which jobs have a cancellation request.
    func renew(
        _ leases: [Lease], leaseDuration: Duration,
        completion: @escaping @Sendable (Result<LeaseRenewal, any Error>) -> Void)

    /// Crash recovery: every running job whose lease expired goes back to
    /// pending (its fulfilled stages kept, so it resumes from its first stage
    /// without a fulfilled result), or to cancelled if a cancellation was
    /// requested. Gives the ids of the jobs it changed.
    ///
    /// The leases in `sparing` are left alone whatever their expiry says:
    /// the caller runs those jobs and renews their leases (after the wall
    /// clock stepped forward, every live lease looks expired until renewed).
    func requeueExpiredLeases(sparing: [Lease], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void)

    /// What time it is by the database's clock, the one stored times are
    /// compared with (by default, the host's: SQLite).
    func databaseTime() async throws -> DatabaseTime

    /// The owners holding leases on running jobs now, with how many jobs each.
    func leaseOwners() async throws -> [String: Int]

    /// Ends the leases of `owners` at once — runners known to be dead (a
    /// daemon restarted after a crash on the same host) — so that the next
    /// `requeueExpiredLeases` takes their jobs up without waiting for the
    /// leases to run out. Gives how many leases it ended.
    func expireLeases(of owners: [String]) async throws -> Int

    func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    func recordStageResult(_ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// Resolves the job (fulfilled, rejected or cancelled) and releases its lease.
    func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// When the earliest pending job of `pool` becomes runnable (its
    /// `runAt`, maybe past), or `nil` when the pool has no pending job: an
    /// engine sets a timer for it instead of polling for delayed jobs.
    func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void)

    // MARK: Controlling

    /// Cancels a pending job at once, or flags a running one for the engine to stop.
    func requestCancellation(of id: Int64) async throws -> CancellationOutcome

    /// Puts a resolved job back to pending with `attempt + 1` and fresh
    /// stages, after copying its outcome and stages to the attempt history.
    func retry(_ id: Int64, delay: Duration) async throws -> Job

    /// Deletes resolved jobs that finished before `date`, with their stages,
    /// history and events. Returns how many jobs were deleted.
    func prune(finishedBefore date: Date) async throws -> Int

    // MARK: Reading

    /// One job with its stages, or `nil` if there is no such job.
    func job(_ id: Int64) async throws -> JobDetail?

    /// A page of jobs, newest first.
    func list(_ query: JobQuery) async throws -> JobPage

    /// The events of a job, oldest first.
    func events(of jobID: Int64) async throws -> [JobEvent]

    /// The attempts of a job before its current one, oldest first.
    func attemptHistory(of jobID: Int64) async throws -> [JobAttempt]

    /// How many jobs are in each of `states` (every state asked for is a key).
    func countJobs(in states: Set<JobState>) async throws -> [JobState: Int]

    // MARK: Several hosts

    /// What other processes did that this one may want to act on at once: a
    /// job became runnable, a cancellation was requested. Each call gives a
    /// stream of its own, which ends when the task reading it is cancelled.
    ///
    /// A hint, never the only way to learn about work: a wake-up may be lost
    /// (a dropped connection), so the engine still claims, renews and polls
    /// on its timers; ``StoreWakeUp/resync`` says that some may have been.
    /// A store whose wake-ups come another way (SQLite: jobctl nudges jobd
    /// over the control socket) gives a stream that never yields.
    func wakeUps() -> AsyncStream<StoreWakeUp>

    /// Takes, or keeps, the lease on `role` (one name per periodic chore,
    /// e.g. `maintenance`) for `duration` from now: `true` if `owner` holds it
    /// now. Call it again before it expires to keep it; when the holder
    /// stops renewing (it stopped or died), another owner gets it once the
    /// lease ran out. At most one owner holds a role at a time, among every
    /// process using the database.
    func acquireLeadership(of role: String, owner: String, for duration: Duration) async throws -> Bool

    /// Gives up `role` if `owner` holds it, so another owner can take it at once.
    func releaseLeadership(of role: String, owner: String) async throws

    // MARK: Schedules

    /// Every schedule's mark.
    func scheduleMarks() async throws -> [ScheduleMark]

    /// Starts the mark of a schedule that has none at `at` (occurrences up to
    /// then are never fired: a new schedule fires from now on). Gives the
    /// mark in force, this one or one another process started first.
    func startSchedule(definition: String, schedule: String, at: Date) async throws -> Date

    /// Fires `occurrence` — or skips or holds it, as its overlap says — in
    /// one transaction that also moves the schedule's mark to it: however
    /// many processes call this for one occurrence, exactly one fires or
    /// skips it, and the others get ``OccurrenceOutcome/alreadyDone``. An
    /// occurrence whose (definition, scheduled_for) another schedule of the
    /// definition already fired makes no job: ``OccurrenceOutcome/coincided(job:)``.
    func fireOccurrence(_ occurrence: ScheduleOccurrence) async throws -> OccurrenceOutcome

    /// Moves a schedule's mark to `through` without firing (occurrences a
    /// `catch-up` policy passes over). False when the mark was already
    /// there: another process passed over them first.
    func skipOccurrences(definition: String, schedule: String, through: Date) async throws -> Bool

    /// The newest scheduled job (latest `scheduled_for`) of each definition that has one.
    func latestScheduledJobs() async throws -> [String: Job]
}

/// Something another process did, told by ``JobStore/wakeUps()``.
public enum StoreWakeUp: Sendable, Hashable {
    /// A job of `pool` became runnable (a submit, a retry): claim now.
    case runnable(pool: String)
    /// A cancellation of running job `jobID` was requested: if it runs
    /// here, stop it now (``JobStore/renew(_:leaseDuration:completion:)``
    /// reports it too, later).
    case cancellationRequested(jobID: Int64)
    /// The store lost its wake-ups for a while (it reconnected): some may
    /// have been missed. Claim, and renew, as if each had come.
    case resync
}

extension JobStore {
    /// No wake-ups: a stream that never yields and ends when its reader's task is cancelled.
    public func wakeUps() -> AsyncStream<StoreWakeUp> {
        AsyncStream { _ in }
    }
}

/// A past attempt of a retried job: its outcome and stages as they were.
public struct JobAttempt: Sendable, Hashable {
    public var jobID: Int64
    public var attempt: Int
    public var state: JobState
    public var result: Data?
    public var error: String?
    public var startedAt: Date?
    public var finishedAt: Date?
    /// The stages as they were when the job was retried.
    public var stages: [Stage]
}

extension JobStore {
    /// Submits one job.
    public func submit(_ job: NewJob) async throws -> Submission {
        let submissions = try await submit([job])
        return submissions[0]
    }

    public func retry(_ id: Int64) async throws -> Job {
        try await retry(id, delay: .zero)
    }

    /// Deletes resolved jobs that finished more than `retention` ago.
    public func prune(olderThan retention: Duration) async throws -> Int {
        try await prune(finishedBefore: Date(timeIntervalSinceNow: -retention.timeInterval))
    }

    public func claim(pool: String, owner: String, limit: Int, leaseDuration: Duration) async throws -> [ClaimedJob] {
        try await withCheckedThrowingContinuation { continuation in
            claim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration) { continuation.resume(with: $0) }
        }
    }

    public func renew(_ leases: [Lease], leaseDuration: Duration) async throws -> LeaseRenewal {
        try await withCheckedThrowingContinuation { continuation in
            renew(leases, leaseDuration: leaseDuration) { continuation.resume(with: $0) }
        }
    }

    public func requeueExpiredLeases(sparing: [Lease] = []) async throws -> [Int64] {
        try await withCheckedThrowingContinuation { continuation in
            requeueExpiredLeases(sparing: sparing) { continuation.resume(with: $0) }
        }
    }

    public func recordStageStart(_ start: StageStart) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            recordStageStart(start) { continuation.resume(with: $0) }
        }
    }

    public func recordStageResult(_ result: StageResult) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            recordStageResult(result) { continuation.resume(with: $0) }
        }
    }

    public func finish(_ finish: JobFinish) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.finish(finish) { continuation.resume(with: $0) }
        }
    }

    public func recordEvent(_ event: NewEvent) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            recordEvent(event) { continuation.resume(with: $0) }
        }
    }
}

extension JobStore {
    public func nextRunAt(pool: String) async throws -> Date? {
        try await withCheckedThrowingContinuation { continuation in
            nextRunAt(pool: pool) { continuation.resume(with: $0) }
        }
    }
}
