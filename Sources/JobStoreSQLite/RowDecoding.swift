import Foundation
internal import GRDB
import JobStore

/// Column lists and row decoding, in one place so that the SQL and the
/// decoders cannot drift apart.
enum Columns {
    static let job = jobColumns(input: "input", result: "result", error: "error")
    /// `job` for a list that shows no values (``JobQuery/values``): no
    /// input and result, the error's first ``JobQuery/summaryErrorCharacters``.
    static let jobSummary = jobColumns(
        input: "NULL", result: "NULL", error: "substr(error, 1, \(JobQuery.summaryErrorCharacters))")

    private static func jobColumns(input: String, result: String, error: String) -> String {
        """
        id, definition, pool, state, priority, idempotency_key, \(input), \(result), \(error), attempt, \
        cancel_requested, claims, lease_owner, lease_expires_at, run_at, created_at, started_at, finished_at, \
        scheduled_for, parent_id, parent_stage, item_index, \(waitingOn)
        """
    }

    /// `waiting_on`, with a waiting parent's children still to end read
    /// from its countdown (`job_joins`): its `jobs` row keeps the number it
    /// began waiting for. Only a waiting job costs the lookup; the claim
    /// reads none. Valid wherever `jobs` is the table read, unaliased.
    static let waitingOn = """
        CASE WHEN waiting_on > 0 THEN coalesce((SELECT remaining FROM job_joins WHERE job_joins.job_id = jobs.id), waiting_on) ELSE 0 END
        """

    static func listed(values: Bool) -> String { values ? job : jobSummary }
    static let stage = """
        job_id, position, name, kind, state, value, error, exit_code, attempts, started_at, finished_at, error_code
        """
    /// How many columns `stage` lists: the index of a column selected after them.
    static let stageCount = Int32(stage.split(separator: ",").count)
    static let event = "id, job_id, position, kind, message, created_at"

    /// The names of `job`'s columns, in order, for errors that name one.
    static let jobNames = [
        "id", "definition", "pool", "state", "priority", "idempotency_key", "input", "result", "error", "attempt",
        "cancel_requested", "claims", "lease_owner", "lease_expires_at", "run_at", "created_at", "started_at",
        "finished_at", "scheduled_for", "parent_id", "parent_stage", "item_index", "waiting_on",
    ]
    static let stageNames = stage.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    /// The names of the `job_attempts` columns jobd reads, in the order it reads them.
    static let attemptNames = ["job_id", "attempt", "state", "result", "error", "started_at", "finished_at"]
    static let eventNames = event.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// A `jobs` row; a column that does not hold what jobd writes there is a
    /// ``JobStoreError/Code/badRow`` naming it.
    static func job(_ raw: RawRow) throws -> Job {
        var row = CheckedRow(raw, table: "jobs", names: jobNames)
        row.identify([0], jobColumn: 0)
        var job = Job(
            id: try row.integer(0),
            definition: try row.requiredText(1),
            pool: try row.requiredText(2),
            state: try row.state(3, JobState.self),
            priority: Int(try row.integer(4)),
            idempotencyKey: try row.text(5),
            input: row.value(6),
            result: row.value(7),
            error: try row.text(8),
            attempt: try row.count(9),
            cancelRequested: try row.bool(10),
            claims: try row.count(11),
            leaseOwner: try row.text(12),
            leaseExpiresAt: try row.date(13),
            runAt: try row.requiredDate(14),
            createdAt: try row.requiredDate(15),
            startedAt: try row.date(16),
            finishedAt: try row.date(17),
            scheduledFor: try row.date(18))
        job.parentID = try row.optionalInteger(19, in: 1...Int64.max)
        job.parentStage = try row.optionalInteger(20, in: 0...Int64(Int32.max)).map { Int($0) }
        job.itemIndex = try row.optionalInteger(21, in: 0...Int64(Int32.max)).map { Int($0) }
        job.waitingOn = try row.count(22)
        return job
    }

    /// A `stages` row (or a `stage_attempts` row, whose first columns are the same).
    static func stage(_ raw: RawRow, table: String = "stages") throws -> Stage {
        var row = CheckedRow(raw, table: table, names: stageNames)
        row.identify([0, 1], jobColumn: 0)
        return Stage(
            jobID: try row.integer(0),
            position: try row.count(1),
            name: try row.requiredText(2),
            kind: try row.requiredText(3),
            state: try row.state(4, StageState.self),
            value: row.value(5),
            error: try row.text(6),
            exitCode: try row.optionalInteger(7, in: Int64(Int32.min)...Int64(Int32.max)).map { Int32($0) },
            attempts: try row.count(8),
            startedAt: try row.date(9),
            finishedAt: try row.date(10),
            errorCode: try row.text(11))
    }

    /// The stages of a job, in order.
    static func stages(of jobID: Int64, _ db: Database) throws -> [Stage] {
        let statement = try RawStatement(db, "SELECT \(stage) FROM stages WHERE job_id = ? ORDER BY position")
        try statement.bind(1, jobID)
        return try statement.rows { try Columns.stage($0) }
    }

    static func event(_ raw: RawRow) throws -> JobEvent {
        var row = CheckedRow(raw, table: "events", names: eventNames)
        row.identify([0], jobColumn: 1)
        return JobEvent(
            id: try row.integer(0), jobID: try row.optionalInteger(1),
            position: try row.optionalInteger(2, in: CheckedRow.counts).map { Int($0) },
            kind: try row.requiredText(3), message: try row.requiredText(4), createdAt: try row.requiredDate(5))
    }

    /// `?, ?, ?` for `count` arguments.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
