import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore: StageLogStore {
    public func writeStageLog(_ batch: StageLogBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    {
        // A savepoint: the deletes, the lines and the drop record go together.
        writer.enqueue(atomic: true, { session in try await Self.write(batch, session) }, completion: completion)
    }

    private static func write(_ batch: StageLogBatch, _ session: PostgresSession) async throws {
        let key = batch.key
        let (job, jobAttempt, position, attempt) = (
            key.jobID, Int64(key.jobAttempt), Int64(key.position), Int64(key.attempt)
        )
        let attemptRows = "job_id = $1 AND job_attempt = $2::int8 AND position = $3::int8 AND attempt = $4::int8"
        if batch.replacesEarlierRun {
            try await session.execute(
                "DELETE FROM {s}.stage_logs WHERE \(attemptRows)", job, jobAttempt, position, attempt)
        }
        if let range = batch.deleting {
            try await session.execute(
                "DELETE FROM {s}.stage_logs WHERE \(attemptRows) AND seq BETWEEN $5::int8 AND $6::int8",
                job, jobAttempt, position, attempt, Int64(range.lowerBound), Int64(range.upperBound))
        }
        // The job may have been deleted meanwhile: then nothing is written.
        let jobExists = "EXISTS (SELECT 1 FROM {s}.jobs WHERE id = $1)"
        if !batch.lines.isEmpty {
            let values = batch.lines.map { PostgresStoredValue.split(Data($0.bytes)) }
            try await session.execute(
                """
                INSERT INTO {s}.stage_logs (job_id, job_attempt, position, attempt, seq, at, line, line_bytes, stream)
                SELECT $1, $2::int8, $3::int8, $4::int8, l.seq, l.at::timestamptz, l.line, l.line_bytes, l.stream
                FROM unnest($5::int8[], $6::text[], $7::text[], $8::bytea[], $9::text[])
                    AS l(seq, at, line, line_bytes, stream)
                WHERE \(jobExists)
                """,
                job, jobAttempt, position, attempt, batch.lines.map { Int64($0.sequence) },
                batch.lines.map { Timestamp.text($0.at) }, PostgresArray(values.map(\.text)),
                PostgresArray.bytes(values.map(\.bytes)), batch.lines.map(\.stream.rawValue))
        }
        if let dropped = batch.dropped {
            try await session.execute(
                """
                INSERT INTO {s}.stage_logs (job_id, job_attempt, position, attempt, seq, at, dropped_lines, dropped_bytes)
                SELECT $1, $2::int8, $3::int8, $4::int8, $5::int8, $6::timestamptz, $7::int8, $8::int8
                WHERE \(jobExists)
                ON CONFLICT (job_id, job_attempt, position, attempt, seq) DO UPDATE
                SET at = excluded.at, line = NULL, line_bytes = NULL, dropped_lines = excluded.dropped_lines,
                    dropped_bytes = excluded.dropped_bytes
                """,
                job, jobAttempt, position, attempt, Int64(dropped.sequence), Timestamp.text(dropped.at),
                Int64(dropped.lines), Int64(dropped.bytes))
        }
    }

    public func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry] {
        try Self.require(
            StageLogQuery.limitRange.contains(query.limit),
            "a log read's limit must be within \(StageLogQuery.limitRange), not \(query.limit)")
        var conditions = ["job_id = $1"]
        var arguments: [Int64] = [query.jobID]
        func add(_ condition: (String) -> String, _ value: Int) {
            arguments.append(Int64(value))
            conditions.append(condition("$\(arguments.count)::int8"))
        }
        if let jobAttempt = query.jobAttempt { add({ "job_attempt = \($0)" }, jobAttempt) }
        if let position = query.position { add({ "position = \($0)" }, position) }
        if let attempt = query.attempt { add({ "attempt = \($0)" }, attempt) }
        if let after = query.after {
            let first = arguments.count + 1
            arguments += [after.jobAttempt, after.position, after.attempt, after.sequence].map(Int64.init)
            conditions.append(
                "(job_attempt, position, attempt, seq) > ($\(first)::int8, $\(first + 1)::int8, $\(first + 2)::int8, $\(first + 3)::int8)"
            )
        }
        arguments.append(Int64(query.limit))
        let sql = """
            SELECT job_attempt, position, attempt, seq, at, line, line_bytes, dropped_lines, dropped_bytes, stream
            FROM {s}.stage_logs
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY job_attempt, position, attempt, seq LIMIT $\(arguments.count)
            """
        let bound = arguments
        return try await read(doing: "read the log of job \(query.jobID)") { session in
            try await session.rows(session.query(sql, bound.map { $0 as (any PostgresThrowingDynamicTypeEncodable)? }))
            { raw in
                let row = PostgresIndexedRow(raw)
                let cursor = StageLogCursor(
                    jobAttempt: try row.int(0), position: try row.int(1), attempt: try row.int(2),
                    sequence: try row.int(3))
                let at = try row.date(4) ?? Date(timeIntervalSince1970: 0)
                if let lines = try row.optionalInt(7) {
                    return StageLogEntry(
                        cursor: cursor, at: at, content: .dropped(lines: lines, bytes: try row.optionalInt(8) ?? 0))
                }
                return StageLogEntry(
                    cursor: cursor, at: at, content: .line(Array(try row.value(5) ?? Data())),
                    stream: try row.text(9).flatMap(StageLogStream.init) ?? .stderr)
            }
        }
    }
}
