import Foundation
internal import GRDB

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
        scheduled_for
        """
    }

    static func listed(values: Bool) -> String { values ? job : jobSummary }
    static let stage = """
        job_id, position, name, kind, state, value, error, exit_code, attempts, started_at, finished_at, error_code
        """
    /// How many columns `stage` lists: the index of a column selected after them.
    static let stageCount = Int32(stage.split(separator: ",").count)
    static let event = "id, job_id, position, kind, message, created_at"

    static func job(_ row: RawRow) throws -> Job {
        let id = row.int64(0)
        let stateText = row.text(3) ?? ""
        guard let state = JobState(rawValue: stateText) else {
            throw JobStoreError(.corrupt, "job \(id) has the unknown state '\(stateText)' in jobs.state", jobID: id)
        }
        return Job(
            id: id,
            definition: row.text(1) ?? "",
            pool: row.text(2) ?? "",
            state: state,
            priority: row.int(4),
            idempotencyKey: row.text(5),
            input: row.value(6),
            result: row.value(7),
            error: row.text(8),
            attempt: row.int(9),
            cancelRequested: row.bool(10),
            claims: row.int(11),
            leaseOwner: row.text(12),
            leaseExpiresAt: row.date(13),
            runAt: row.date(14) ?? Date(timeIntervalSince1970: 0),
            createdAt: row.date(15) ?? Date(timeIntervalSince1970: 0),
            startedAt: row.date(16),
            finishedAt: row.date(17),
            scheduledFor: row.date(18))
    }

    static func stage(_ row: RawRow) throws -> Stage {
        let jobID = row.int64(0)
        let position = row.int(1)
        let stateText = row.text(4) ?? ""
        guard let state = StageState(rawValue: stateText) else {
            throw JobStoreError(
                .corrupt, "stage \(position) of job \(jobID) has the unknown state '\(stateText)'", jobID: jobID)
        }
        return Stage(
            jobID: jobID,
            position: position,
            name: row.text(2) ?? "",
            kind: row.text(3) ?? "",
            state: state,
            value: row.value(5),
            error: row.text(6),
            exitCode: row.optionalInt(7).map { Int32(truncatingIfNeeded: $0) },
            attempts: row.int(8),
            startedAt: row.date(9),
            finishedAt: row.date(10),
            errorCode: row.text(11))
    }

    /// The stages of a job, in order.
    static func stages(of jobID: Int64, _ db: Database) throws -> [Stage] {
        let statement = try RawStatement(db, "SELECT \(stage) FROM stages WHERE job_id = ? ORDER BY position")
        try statement.bind(1, jobID)
        return try statement.rows(Columns.stage)
    }

    static func event(_ row: Row) -> JobEvent {
        JobEvent(
            id: row[0], jobID: row[1], position: row[2], kind: row[3], message: row[4],
            createdAt: date(row[5]) ?? Date(timeIntervalSince1970: 0))
    }

    private static func date(_ text: String?) -> Date? {
        text.flatMap(Timestamp.date)
    }

    /// `?, ?, ?` for `count` arguments.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
