import Foundation

/// What both stores check and compute before writing, in one place, so
/// that they refuse the same things with the same messages.
extension NewJob {
    /// The longest limit key, or unique key, accepted (it is indexed).
    package static let maxLimitKeyBytes = 1024

    /// Refuses a batch with a bad job in it, before anything is written.
    package static func check(_ jobs: [NewJob], cap: Int) throws {
        func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw JobStoreError(.invalidArgument, message()) }
        }
        for (index, job) in jobs.enumerated() {
            let which = jobs.count == 1 ? "the job" : "job \(index + 1) of the batch"
            try require(!job.definition.isEmpty, "\(which) has an empty definition name")
            try require(!job.pool.isEmpty, "\(which) (\(job.definition)) has an empty pool name")
            try require(
                job.idempotencyKey?.isEmpty != true,
                "\(which) (\(job.definition)) has an empty idempotency key; pass none instead")
            if let key = job.limitKey {
                try require(
                    key.utf8.count <= NewJob.maxLimitKeyBytes && !key.utf8.contains(0),
                    "\(which) (\(job.definition)) has a limit key of \(key.utf8.count) bytes"
                        + (key.utf8.contains(0) ? " with a NUL byte" : "")
                        + "; a limit key is text of at most \(NewJob.maxLimitKeyBytes) bytes without NUL: "
                        + "point the definition's 'limit: { key: … }' at a shorter part of the input")
            }
            if let unique = job.unique {
                let key = unique.key
                try require(
                    key.utf8.count <= NewJob.maxLimitKeyBytes && !key.utf8.contains(0),
                    "\(which) (\(job.definition)) has a unique key of \(key.utf8.count) bytes"
                        + (key.utf8.contains(0) ? " with a NUL byte" : "")
                        + "; a unique key is text of at most \(NewJob.maxLimitKeyBytes) bytes without NUL: "
                        + "point the definition's 'unique: { key: … }' at a shorter part of the input")
                try require(
                    unique.period.map { $0 > .zero && $0 <= .seconds(100 * 365 * 86_400) } != false,
                    "\(which) (\(job.definition)) has a unique period out of range (more than zero, at most 100 years)")
            }
            for (position, stage) in job.stages.enumerated() {
                try require(
                    !stage.name.isEmpty && !stage.kind.isEmpty,
                    "stage \(position) of \(which) (\(job.definition)) needs a name and a kind")
            }
            try require(
                job.runAt.map(Timestamp.isStorable) != false && job.scheduledFor.map(Timestamp.isStorable) != false,
                "\(which) (\(job.definition)) is to run past the latest time the store holds (9999-12-31)")
            try StoredValue.check(
                job.input, "the input of \(which) (\(job.definition))", cap: cap, jobID: nil,
                remedy: StoredValue.smallerInput)
        }
    }
}

/// A stage result as its columns, checked against the value cap.
package struct StoredStageResult {
    package var state: StageState
    package var value: Data?
    package var error: String?
    package var errorCode: String?

    package init(_ result: StageResult, cap: Int) throws {
        switch result.outcome {
        case .fulfilled(let data): (state, value) = (.fulfilled, data)
        case .rejected(let message): (state, error, errorCode) = (.rejected, message, result.errorCode)
        case .skipped: state = .skipped
        }
        let jobID = result.lease.jobID
        try StoredValue.check(value, "the value of stage \(result.position) of job \(jobID)", cap: cap, jobID: jobID)
        try StoredValue.check(error, "the error of stage \(result.position) of job \(jobID)", cap: cap, jobID: jobID)
    }
}

/// A job's end as its columns, checked against the value cap.
package struct StoredJobFinish {
    package var state: JobState
    package var result: Data?
    package var error: String?

    package init(_ finish: JobFinish, cap: Int) throws {
        switch finish.outcome {
        case .fulfilled(let data): (state, result) = (.fulfilled, data)
        case .rejected(let message): (state, error) = (.rejected, message)
        case .cancelled(let reason): (state, error) = (.cancelled, reason ?? "cancelled")
        }
        let jobID = finish.lease.jobID
        try StoredValue.check(result, "the result of job \(jobID)", cap: cap, jobID: jobID)
        try StoredValue.check(error, "the error of job \(jobID)", cap: cap, jobID: jobID)
    }
}

extension JobStoreError {
    /// Why a write fenced by `lease` changed nothing, from the job as it is
    /// now (`nil` if there is no such job); `nil` if the lease still holds
    /// (then the stage named does not exist: ``noSuchStage(_:position:doing:count:)``).
    package static func fence(
        _ lease: Lease, position: Int?, doing what: String, job: (state: String, owner: String?, claims: Int)?
    ) -> JobStoreError? {
        let target = fenceTarget(lease, position)
        guard let job else {
            return JobStoreError(
                .jobNotFound, "cannot \(what) \(target): there is no such job (was it pruned?)", jobID: lease.jobID)
        }
        guard job.state != JobState.running.rawValue || job.owner != lease.owner || job.claims != lease.claim else {
            return nil
        }
        if job.owner == lease.owner, job.claims == lease.claim, JobState(rawValue: job.state)?.isResolved == true {
            var late = JobStoreError(
                .leaseLost,
                "cannot \(what) \(target): the job was already \(job.state) by this same claim (claim \(lease.claim) of "
                    + "\(lease.owner)); this write came after the job's end and is not needed",
                jobID: lease.jobID)
            late.cameAfterOwnEnd = true
            return late
        }
        return JobStoreError(
            .leaseLost,
            "cannot \(what) \(target): the lease of \(lease.owner) (claim \(lease.claim)) is no longer the job's "
                + "(it is \(job.state), claim \(job.claims) by \(job.owner ?? "nobody")). The lease expired and the job was "
                + "requeued; stop working on it — renew leases more often than they expire.",
            jobID: lease.jobID)
    }

    package static func noSuchStage(_ lease: Lease, position: Int?, doing what: String, count: Int) -> JobStoreError {
        JobStoreError(
            .invalidArgument,
            "cannot \(what) \(fenceTarget(lease, position)): the job has \(count) stages (positions 0…\(max(count - 1, 0)))",
            jobID: lease.jobID)
    }

    private static func fenceTarget(_ lease: Lease, _ position: Int?) -> String {
        position.map { "stage \($0) of job \(lease.jobID)" } ?? "job \(lease.jobID)"
    }

    /// The error message of the stage a resolution cut short.
    package static func interruptedMessage(_ state: JobState) -> String {
        "interrupted: the job was \(state.rawValue) while this stage ran"
    }

    /// Why a job cannot be retried in `state`.
    package static func cannotRetry(_ id: Int64, _ state: JobState) -> JobStoreError {
        JobStoreError(
            .invalidState,
            "cannot retry job \(id): it is \(state.rawValue); only a fulfilled, rejected or cancelled "
                + "job can be retried (cancel it first, or wait for it)",
            jobID: id)
    }

    /// Refuses a claim with bad arguments.
    package static func checkClaim(pool: String, owner: String, limit: Int, leaseDuration: Duration) throws {
        func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw JobStoreError(.invalidArgument, message()) }
        }
        try require(!pool.isEmpty, "claim needs a pool name")
        try require(!owner.isEmpty, "claim needs a lease owner (a name unique to this process)")
        try require(limit > 0, "claim limit must be positive, not \(limit)")
        try checkLeaseDuration(leaseDuration)
    }

    package static func checkLeadership(role: String, owner: String, duration: Duration) throws {
        guard !role.isEmpty && !owner.isEmpty else {
            throw JobStoreError(.invalidArgument, "leadership needs a role and an owner")
        }
        guard duration > .zero else {
            throw JobStoreError(.invalidArgument, "a leadership lease must last more than zero, not \(duration)")
        }
    }

    package static func checkLeaseDuration(_ duration: Duration) throws {
        if duration <= .zero {
            throw JobStoreError(.invalidArgument, "a lease must last more than zero, not \(duration)")
        }
    }
}

extension NewEvent {
    /// What `requeueExpiredLeases` tells of a job it put back to pending.
    package static func requeued(_ id: Int64, owner: String, expiry: String) -> NewEvent {
        NewEvent(
            jobID: id, kind: "requeued",
            message:
                "lease of \(owner) expired at \(expiry); job requeued, it resumes at its first stage without a fulfilled result"
        )
    }

    /// What `requeueExpiredLeases` tells of a job it cancelled.
    package static func cancelledAtExpiry(_ id: Int64, owner: String, expiry: String) -> NewEvent {
        NewEvent(
            jobID: id, kind: "cancelled",
            message: "lease of \(owner) expired at \(expiry) with a cancellation requested; job cancelled")
    }

    /// What a submit tells of a running job whose unique key it took, the
    /// job's lease having expired (its host gone).
    package static func uniqueKeyTaken(_ id: Int64) -> NewEvent {
        NewEvent(
            jobID: id, kind: "unique-key-taken",
            message:
                "its lease expired while it held its unique key, and a new submit of that key took it; "
                + "cancellation requested, so that it ends instead of running again beside the new job")
    }

    /// What jobd tells of a job it set aside because its row cannot be read.
    package static func quarantined(_ id: Int64, _ error: JobStoreError) -> NewEvent {
        NewEvent(jobID: id, kind: "quarantined", message: Quarantine.error(error))
    }
}

/// What jobd does with a job whose row (or one of its stages' rows) it
/// cannot read, when it meets one while claiming or requeueing: it rejects
/// the job, with an error that says why, and writes nothing else in the row,
/// so the column at fault keeps what it holds for someone to correct. The
/// other jobs go on. docs/schema.md, "Rows written by hand", says the same.
package enum Quarantine {
    package static func error(_ error: JobStoreError) -> String {
        "quarantined: jobd cannot read this job: \(error.message); after correcting the row, `jobctl retry` runs it again"
    }
}
