import Foundation
import JobStore
package import PostgresNIO

/// Column lists and row decoding for PostgreSQL, in one place so that the
/// SQL and the decoders cannot drift apart (the twin of `Columns`).
enum PostgresQueryColumns {
    static let job = jobColumns(
        input: "input, input_bytes", result: "result, result_bytes", error: "error")
    /// `job` for a list that shows no values (``JobQuery/values``): no
    /// input and result, the error's first ``JobQuery/summaryErrorCharacters``.
    static let jobSummary = jobColumns(
        input: "NULL::text, NULL::bytea", result: "NULL::text, NULL::bytea",
        error: "left(error, \(JobQuery.summaryErrorCharacters))")

    private static func jobColumns(input: String, result: String, error: String) -> String {
        """
        id, definition, pool, state, priority, idempotency_key, \(input), \(result), \(error), \
        attempt, cancel_requested, claims, lease_owner, lease_expires_at, run_at, created_at, started_at, \
        finished_at, scheduled_for, parent_id, parent_stage, item_index, \(waitingOn)
        """
    }

    /// `waiting_on`, with a waiting parent's children still to end read
    /// from its countdown (`job_joins`): its `jobs` row keeps the number it
    /// began waiting for. Only a waiting job costs the lookup. Valid
    /// wherever `jobs` is the table read, unaliased.
    static let waitingOn = """
        CASE WHEN waiting_on > 0 THEN coalesce((SELECT remaining FROM {s}.job_joins WHERE job_joins.job_id = jobs.id), waiting_on) ELSE 0 END
        """

    static func listed(values: Bool) -> String { values ? job : jobSummary }
    static let stage = """
        job_id, position, name, kind, state, value, value_bytes, error, exit_code, attempts, started_at, \
        finished_at, error_code
        """
    /// How many columns `stage` lists: the index of a column selected after them.
    static let stageCount = stage.split(separator: ",").count
    static let event = "id, job_id, position, kind, message, created_at"

    static func job(_ row: PostgresRow) throws -> Job {
        let row = PostgresIndexedRow(row)
        let id = try row.int64(0)
        let stateText = try row.text(3) ?? ""
        guard let state = JobState(rawValue: stateText) else {
            throw PostgresQueryColumns.badState("jobs", "id \(id)", stateText, JobState.self, jobID: id)
        }
        var job = Job(
            id: id, definition: try row.text(1) ?? "", pool: try row.text(2) ?? "", state: state,
            priority: try row.int(4), idempotencyKey: try row.text(5),
            input: try row.value(6), result: try row.value(8), error: try row.text(10),
            attempt: try row.int(11), cancelRequested: try row.bool(12), claims: try row.int(13),
            leaseOwner: try row.text(14), leaseExpiresAt: try row.date(15),
            runAt: try row.date(16) ?? Date(timeIntervalSince1970: 0),
            createdAt: try row.date(17) ?? Date(timeIntervalSince1970: 0),
            startedAt: try row.date(18), finishedAt: try row.date(19), scheduledFor: try row.date(20))
        job.parentID = try row.optionalInt64(21)
        job.parentStage = try row.optionalInt(22)
        job.itemIndex = try row.optionalInt(23)
        job.waitingOn = try row.int(24)
        return job
    }

    static func stage(_ row: PostgresRow) throws -> Stage {
        let row = PostgresIndexedRow(row)
        let jobID = try row.int64(0)
        let position = try row.int(1)
        let stateText = try row.text(4) ?? ""
        guard let state = StageState(rawValue: stateText) else {
            throw PostgresQueryColumns.badState(
                "stages", "job_id \(jobID), position \(position)", stateText, StageState.self, jobID: jobID)
        }
        return Stage(
            jobID: jobID, position: position, name: try row.text(2) ?? "", kind: try row.text(3) ?? "",
            state: state, value: try row.value(5), error: try row.text(7),
            exitCode: try row.optionalInt(8).map { Int32(truncatingIfNeeded: $0) }, attempts: try row.int(9),
            startedAt: try row.date(10), finishedAt: try row.date(11), errorCode: try row.text(12))
    }

    /// A state the CHECK constraint would refuse (it was dropped by hand):
    /// the same bad-row error as the SQLite store's. Every other column is
    /// typed and constrained by PostgreSQL itself, and postgres-nio's
    /// decoding throws (it never traps) on a type it does not expect.
    static func badState<Value: RawRepresentable & CaseIterable>(
        _ table: String, _ key: String, _ text: String, _: Value.Type, jobID: Int64
    ) -> JobStoreError where Value.RawValue == String {
        let known = Value.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        return JobStoreError(
            .badRow,
            "cannot read the \(table) row \(key): its column state holds the text '\(text.prefix(40))' where jobd "
                + "reads one of \(known); the row was written by something other than jobd: correct or delete it "
                + "(see \"Rows written by hand\" in docs/schema.md)",
            jobID: jobID)
    }

    static func event(_ row: PostgresRow) throws -> JobEvent {
        let row = PostgresIndexedRow(row)
        return JobEvent(
            id: try row.int64(0), jobID: try row.optionalInt64(1), position: try row.optionalInt(2),
            kind: try row.text(3) ?? "", message: try row.text(4) ?? "",
            createdAt: try row.date(5) ?? Date(timeIntervalSince1970: 0))
    }
}

/// One row, read by 0-based column index.
package struct PostgresIndexedRow {
    let row: PostgresRandomAccessRow

    package init(_ row: PostgresRow) {
        self.row = row.makeRandomAccess()
    }

    func isNull(_ column: Int) -> Bool { row[column].bytes == nil }

    func text(_ column: Int) throws -> String? {
        isNull(column) ? nil : try row[column].decode(String.self)
    }

    func int64(_ column: Int) throws -> Int64 { try row[column].decode(Int64.self) }

    func optionalInt64(_ column: Int) throws -> Int64? { isNull(column) ? nil : try int64(column) }

    package func int(_ column: Int) throws -> Int { try row[column].decode(Int.self) }

    func optionalInt(_ column: Int) throws -> Int? { isNull(column) ? nil : try int(column) }

    func bool(_ column: Int) throws -> Bool { try row[column].decode(Bool.self) }

    /// A time, to the millisecond (as the SQLite store keeps them).
    func date(_ column: Int) throws -> Date? {
        guard !isNull(column) else { return nil }
        return PostgresStoredValue.milliseconds(try row[column].decode(Date.self))
    }

    /// A value kept as `NAME text` (this column) or `NAME_bytes bytea` (the next one).
    func value(_ column: Int) throws -> Data? {
        if let text = try text(column) { return Data(text.utf8) }
        guard !isNull(column + 1) else { return nil }
        return try row[column + 1].decode(Data.self)
    }
}

/// How values and times are written.
package enum PostgresStoredValue {
    /// A value as its two columns: text when valid UTF-8 without NUL, else bytes.
    package static func split(_ data: Data?) -> (text: String?, bytes: Data?) {
        guard let data else { return (nil, nil) }
        if data.withUnsafeBytes(StoredValue.isText) { return (String(decoding: data, as: UTF8.self), nil) }
        return (nil, data)
    }

    /// A time as text PostgreSQL reads (`'…Z'::timestamptz`), to the millisecond.
    static func time(_ date: Date?) -> String? {
        date.map(Timestamp.text)
    }

    /// When a job may run: rounded down to the millisecond, so that a job
    /// submitted for "now" is never a fraction of a millisecond in the future.
    static func runAt(_ date: Date?) -> String? {
        date.map { Timestamp.text(milliseconds: Int64(($0.timeIntervalSince1970 * 1000).rounded(.down))) }
    }

    static func milliseconds(_ date: Date) -> Date {
        Timestamp.date(milliseconds: Timestamp.milliseconds(date))
    }
}

extension PostgresRowSequence {
    /// Decodes every row.
    func decode<T>(_ decode: (PostgresRow) throws -> T) async throws -> [T] {
        var result: [T] = []
        for try await row in self { result.append(try decode(row)) }
        return result
    }
}
