import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore {
    public func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    {
        let key = GroupCommitWriter.Key(job: start.lease.jobID, position: start.position)
        writer.enqueue(
            key: key, deferred: start.deferrable,
            { db in
                let lease = start.lease
                try Self.checkLease(lease, position: start.position, doing: "record the start of", db)
                // A deferrable start (nobody waited for it) never goes over a
                // result: made again after a store error, it may arrive after
                // the result of its own attempt. An awaited start is on disk
                // before its attempt runs, so it only ever follows an earlier
                // attempt's result, which it clears.
                let statement = try RawStatement(db, start.deferrable ? Self.deferrableStartSQL : Self.startSQL)
                try statement.bind(1, start.attempt)
                try statement.bind(2, Timestamp.text(start.at))
                try statement.bind(3, lease.jobID)
                try statement.bind(4, start.position)
                try statement.execute()
                if db.changesCount == 0 {
                    let exists = try RawStatement(db, "SELECT 1 FROM stages WHERE job_id = ? AND position = ?")
                    try exists.bind(1, lease.jobID)
                    try exists.bind(2, start.position)
                    if try exists.firstRow({ _ in true }) == nil {
                        throw try Self.fenceError(lease, position: start.position, doing: "record the start of", db)
                    }
                }
            }, completion: completion)
    }

    private static let startSQL = """
        UPDATE stages
        SET state = 'running', attempts = ?, started_at = ?,
            finished_at = NULL, value = NULL, error = NULL, exit_code = NULL, error_code = NULL
        WHERE job_id = ? AND position = ?
        """
    private static let deferrableStartSQL = startSQL + " AND state IN ('pending', 'running')"

    public func recordStageResult(
        _ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        let cap = self.cap
        let key = GroupCommitWriter.Key(job: result.lease.jobID, position: result.position)
        writer.enqueue(
            key: key, deferred: false,
            { db in
                let lease = result.lease
                let stored = try StoredStageResult(result, cap: cap)
                try Self.checkLease(lease, position: result.position, doing: "record the result of", db)
                let statement = try RawStatement(
                    db,
                    """
                    UPDATE stages
                    SET state = ?, value = ?, error = ?, exit_code = ?, attempts = ?,
                        started_at = coalesce(?, started_at), finished_at = ?, error_code = ?
                    WHERE job_id = ? AND position = ?
                    """)
                try statement.bind(1, stored.state.rawValue)
                try statement.bind(2, value: stored.value)
                try statement.bind(3, stored.error)
                try statement.bind(4, result.exitCode.map { Int($0) })
                try statement.bind(5, result.attempt)
                try statement.bind(6, result.startedAt.map(Timestamp.text))
                try statement.bind(7, Timestamp.text(result.at))
                try statement.bind(8, stored.errorCode)
                try statement.bind(9, lease.jobID)
                try statement.bind(10, result.position)
                try statement.execute()
                if db.changesCount == 0 {
                    throw try Self.fenceError(lease, position: result.position, doing: "record the result of", db)
                }
            }, completion: completion)
    }

    public func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let cap = self.cap
        // Not in a savepoint (they cost page copies on this hot path): every
        // check comes before the first change, and the two updates by key
        // can only fail in ways that roll back the whole transaction.
        let wakeUps = localWakeUps
        let writer = self.writer
        writer.enqueue(
            atomic: false,
            { db -> [StoreWakeUp] in
                let lease = finish.lease
                let stored = try StoredJobFinish(finish, cap: cap)
                // The lease check, reading the input's length too: the
                // search index takes the row out with its input and puts
                // it back with its result.
                let check = try RawStatement(
                    db,
                    """
                    SELECT length(input) FROM jobs WHERE id = ? AND state = 'running' AND lease_owner = ? AND claims = ?
                    """)
                try check.bind(1, lease.jobID)
                try check.bind(2, lease.owner)
                try check.bind(3, lease.claim)
                guard let inputLength = try check.firstRow({ $0.optionalInt(0) }) else {
                    throw try Self.fenceError(lease, position: nil, doing: "finish", db)
                }
                if SearchIndexReset.isLarge([
                    inputLength ?? 0, stored.result?.count ?? 0, stored.error?.utf8.count ?? 0,
                ]) {
                    writer.searchIndexMayHaveGrown()
                }
                let statement = try RawStatement(
                    db,
                    """
                    UPDATE jobs
                    SET state = ?, result = ?, error = ?, finished_at = ?, lease_expires_at = NULL
                    WHERE id = ?
                    """)
                try statement.bind(1, stored.state.rawValue)
                try statement.bind(2, value: stored.result)
                try statement.bind(3, stored.error)
                try statement.bind(4, Timestamp.text(finish.at))
                try statement.bind(5, lease.jobID)
                try statement.execute()
                try Self.resolveStages(of: lease.jobID, as: stored.state, db)
                // A job's end ends its children still going, and counts toward its parent's join.
                var woken: [StoreWakeUp] = []
                if finish.startsChildren {
                    woken += try Self.cancelChildren(
                        of: lease.jobID, stage: nil, reason: JobStoreError.parentEndedMessage(lease.jobID),
                        now: Timestamp.text(finish.at), db
                    ).map { .cancellationRequested(jobID: $0) }
                }
                if finish.parentID != nil {
                    woken += try Self.jobsEnded([lease.jobID], as: stored.state, db)
                } else {
                    woken += try Self.dependencyEnded(
                        lease.jobID, as: stored.state, now: Timestamp.text(finish.at), db
                    ).sorted().map { .runnable(pool: $0) }
                }
                return woken
            },
            completion: { result in
                if case let .success(woken) = result { wakeUps.yield(woken) }
                completion(result.map { _ in () })
            })
    }

    public func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let cap = self.cap
        writer.enqueue(
            atomic: false,
            { db in
                try StoredValue.check(
                    event.message, "the message of a \(event.kind) event", cap: cap, jobID: event.jobID)
                if let jobID = event.jobID, try !Self.jobExists(jobID, db) {
                    throw JobStoreError(
                        .jobNotFound, "cannot record a \(event.kind) event: there is no job \(jobID)", jobID: jobID)
                }
                try Self.insertEvent(event, db)
            }, completion: completion)
    }

    static func jobExists(_ id: Int64, _ db: Database) throws -> Bool {
        let statement = try RawStatement(db, "SELECT 1 FROM jobs WHERE id = ?")
        try statement.bind(1, id)
        return try statement.firstRow { _ in true } != nil
    }

    static func insertEvent(_ event: NewEvent, _ db: Database) throws {
        let statement = try RawStatement(
            db, "INSERT INTO events (job_id, position, kind, message, created_at) VALUES (?, ?, ?, ?, ?)")
        try statement.bind(1, event.jobID.map { Int($0) })
        try statement.bind(2, event.position)
        try statement.bind(3, event.kind)
        try statement.bind(4, event.message)
        try statement.bind(5, Timestamp.text(event.at))
        try statement.execute()
    }

    /// A resolved job has no pending or running stage: the ones never reached
    /// are skipped, and one cut short is rejected.
    static func resolveStages(of jobID: Int64, as state: JobState, _ db: Database) throws {
        let statement = try RawStatement(
            db,
            """
            UPDATE stages
            SET state = CASE state WHEN 'pending' THEN 'skipped' ELSE 'rejected' END,
                error = CASE state WHEN 'running' THEN ? ELSE error END,
                error_code = CASE state WHEN 'running' THEN 'interrupted' ELSE error_code END
            WHERE job_id = ? AND state IN ('pending', 'running')
            """)
        try statement.bind(1, JobStoreError.interruptedMessage(state))
        try statement.bind(2, jobID)
        try statement.execute()
    }

    /// Fencing: a write about a running job goes through only if `lease` is
    /// still the job's. Checked with a lookup by key before the write, so
    /// the write itself is a plain update by primary key.
    static func checkLease(_ lease: Lease, position: Int?, doing what: String, _ db: Database) throws {
        let statement = try RawStatement(
            db, "SELECT 1 FROM jobs WHERE id = ? AND state = 'running' AND lease_owner = ? AND claims = ?")
        try statement.bind(1, lease.jobID)
        try statement.bind(2, lease.owner)
        try statement.bind(3, lease.claim)
        if try statement.firstRow({ _ in true }) == nil {
            throw try fenceError(lease, position: position, doing: what, db)
        }
    }

    /// Why a fenced write changed nothing.
    static func fenceError(_ lease: Lease, position: Int?, doing what: String, _ db: Database) throws -> JobStoreError {
        let select = try RawStatement(db, "SELECT id, state, lease_owner, claims FROM jobs WHERE id = ?")
        try select.bind(1, lease.jobID)
        let job = try select.firstRow { raw -> (state: String, owner: String?, claims: Int) in
            var row = CheckedRow(raw, table: "jobs", names: ["id", "state", "lease_owner", "claims"])
            row.identify([0], jobColumn: 0)
            return (try row.requiredText(1), try row.text(2), try row.count(3))
        }
        if let error = JobStoreError.fence(lease, position: position, doing: what, job: job) { return error }
        let count =
            try Int.fetchOne(db, sql: "SELECT count(*) FROM stages WHERE job_id = ?", arguments: [lease.jobID]) ?? 0
        return JobStoreError.noSuchStage(lease, position: position, doing: what, count: count)
    }
}
