import Foundation

/// What the engine's runner needs: claiming jobs under leases, keeping the
/// leases, writing each stage's start and result, finishing jobs, and the
/// database's clock and wake-ups. The completion-handler calls are group
/// committed (see ``JobStore``); `async` versions are in an extension.
public protocol JobRunStore: Sendable {
    /// Claims up to `limit` runnable jobs of `pool` — pending, `runAt` past —
    /// highest priority first, then the longest waiting (earliest `runAt`);
    /// each under a lease of `owner` that expires after `leaseDuration`
    /// unless renewed. A job over a limit of `flow` is passed over, and the
    /// jobs behind it are claimed (see ``ClaimFlow``).
    func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
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

    func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    func recordStageResult(_ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// Resolves the job (fulfilled, rejected or cancelled) and releases its lease.
    func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// When the earliest pending job of `pool` becomes runnable (its
    /// `runAt`, maybe past), or `nil` when the pool has no pending job: an
    /// engine sets a timer for it instead of polling for delayed jobs.
    func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void)

    /// When a slot of a rate of `flow` (``StartRate``) frees for a runnable
    /// job of `pool` held back by it — an engine claims then instead of
    /// polling — or `nil` when none is known. It may be early (the job was
    /// held back by something else), never late.
    func nextRateSlot(pool: String, flow: ClaimFlow, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void)

    /// What time it is by the database's clock, the one stored times are
    /// compared with (by default, the host's: SQLite).
    func databaseTime() async throws -> DatabaseTime

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
}

/// Something another process did, told by ``JobRunStore/wakeUps()``.
public enum StoreWakeUp: Sendable, Hashable {
    /// A job of `pool` became runnable (a submit, a retry): claim now.
    case runnable(pool: String)
    /// A cancellation of running job `jobID` was requested: if it runs
    /// here, stop it now (``JobRunStore/renew(_:leaseDuration:completion:)``
    /// reports it too, later).
    case cancellationRequested(jobID: Int64)
    /// A schedule's pause ended: the firer looks at the schedules now.
    case schedulesChanged
    /// The store lost its wake-ups for a while (it reconnected): some may
    /// have been missed. Claim, and renew, as if each had come.
    case resync
}

extension JobRunStore {
    /// No rates known: the engine polls.
    public func nextRateSlot(
        pool: String, flow: ClaimFlow, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void
    ) {
        completion(.success(nil))
    }

    /// No wake-ups: a stream that never yields and ends when its reader's task is cancelled.
    public func wakeUps() -> AsyncStream<StoreWakeUp> {
        AsyncStream { _ in }
    }
}

extension JobRunStore {
    /// Claims without limits.
    public func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        claim(
            pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: .unlimited,
            completion: completion)
    }

    public func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow = .unlimited
    ) async throws -> [ClaimedJob] {
        try await withCheckedThrowingContinuation { continuation in
            claim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow) {
                continuation.resume(with: $0)
            }
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

    public func nextRunAt(pool: String) async throws -> Date? {
        try await withCheckedThrowingContinuation { continuation in
            nextRunAt(pool: pool) { continuation.resume(with: $0) }
        }
    }

    public func nextRateSlot(pool: String, flow: ClaimFlow) async throws -> Date? {
        try await withCheckedThrowingContinuation { continuation in
            nextRateSlot(pool: pool, flow: flow) { continuation.resume(with: $0) }
        }
    }
}
