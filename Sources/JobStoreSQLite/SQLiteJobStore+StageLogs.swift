import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore: StageLogStore {
    public func writeStageLog(_ batch: StageLogBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    {
        // Without a savepoint (they cost page copies): a batch cut short by
        // a failing statement leaves a log with lines missing, nothing worse.
        writer.enqueue(atomic: false, { db in try Self.write(batch, db) }, completion: completion)
    }

    private static func write(_ batch: StageLogBatch, _ db: Database) throws {
        let key = batch.key
        guard try jobExists(key.jobID, db) else { return }
        func bindKey(_ statement: RawStatement) throws {
            try statement.bind(1, key.jobID)
            try statement.bind(2, key.jobAttempt)
            try statement.bind(3, key.position)
            try statement.bind(4, key.attempt)
        }
        let attemptRows = "job_id = ? AND job_attempt = ? AND position = ? AND attempt = ?"
        if batch.replacesEarlierRun {
            let delete = try RawStatement(db, "DELETE FROM stage_logs WHERE \(attemptRows)")
            try bindKey(delete)
            try delete.execute()
        }
        if let range = batch.deleting {
            let delete = try RawStatement(db, "DELETE FROM stage_logs WHERE \(attemptRows) AND seq BETWEEN ? AND ?")
            try bindKey(delete)
            try delete.bind(5, range.lowerBound)
            try delete.bind(6, range.upperBound)
            try delete.execute()
        }
        var rest = batch.lines[...]
        for rows in insertRowCounts(rest.count) {
            let insert = try RawStatement(db, insertSQL[rows])
            var index: Int32 = 0
            var lastTime: (Date, String)?
            for line in rest.prefix(rows) {
                try insert.bind(index + 1, key.jobID)
                try insert.bind(index + 2, key.jobAttempt)
                try insert.bind(index + 3, key.position)
                try insert.bind(index + 4, key.attempt)
                try insert.bind(index + 5, line.sequence)
                // Lines read together share their time: format it once.
                if lastTime?.0 != line.at { lastTime = (line.at, Timestamp.text(line.at)) }
                try insert.bind(index + 6, lastTime?.1)
                try insert.bind(index + 7, value: line.bytes)
                try insert.bind(index + 8, line.stream.rawValue)
                index += 8
            }
            try insert.execute()
            rest = rest.dropFirst(rows)
        }
        if let dropped = batch.dropped {
            let upsert = try RawStatement(
                db,
                """
                INSERT INTO stage_logs (job_id, job_attempt, position, attempt, seq, at, dropped_lines, dropped_bytes)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (job_id, job_attempt, position, attempt, seq) DO UPDATE
                SET at = excluded.at, line = NULL, dropped_lines = excluded.dropped_lines,
                    dropped_bytes = excluded.dropped_bytes
                """)
            try bindKey(upsert)
            try upsert.bind(5, dropped.sequence)
            try upsert.bind(6, Timestamp.text(dropped.at))
            try upsert.bind(7, dropped.lines)
            try upsert.bind(8, dropped.bytes)
            try upsert.execute()
        }
    }

    /// The most lines one INSERT takes; a batch's rest goes in statements of
    /// 16, 8, 4, 2 and 1 rows, so that a batch of n lines costs at most
    /// n / 32 + 5 statements and the writer caches six. Statements of many
    /// rows cost a third of one statement a line; what a statement costs
    /// besides its rows is paid per statement, not per line.
    static let maxRowsPerInsert = 32

    /// How many rows each INSERT of a batch of `count` lines takes, in order.
    static func insertRowCounts(_ count: Int) -> [Int] {
        var counts = Array(repeating: maxRowsPerInsert, count: count / maxRowsPerInsert)
        var rows = maxRowsPerInsert / 2
        var rest = count % maxRowsPerInsert
        while rest > 0 {
            if rest >= rows {
                counts.append(rows)
                rest -= rows
            }
            rows /= 2
        }
        return counts
    }

    /// The INSERT of n rows at index n, written once rather than for every batch.
    private static let insertSQL: [String] = (0...maxRowsPerInsert).map { rows in
        "INSERT INTO stage_logs (job_id, job_attempt, position, attempt, seq, at, line, stream) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    public func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry] {
        try Self.require(
            StageLogQuery.limitRange.contains(query.limit),
            "a log read's limit must be within \(StageLogQuery.limitRange), not \(query.limit)")
        var conditions = ["job_id = ?"]
        var arguments: [Int64] = [query.jobID]
        if let jobAttempt = query.jobAttempt {
            conditions.append("job_attempt = ?")
            arguments.append(Int64(jobAttempt))
        }
        if let position = query.position {
            conditions.append("position = ?")
            arguments.append(Int64(position))
        }
        if let attempt = query.attempt {
            conditions.append("attempt = ?")
            arguments.append(Int64(attempt))
        }
        if let after = query.after {
            conditions.append("(job_attempt, position, attempt, seq) > (?, ?, ?, ?)")
            arguments += [after.jobAttempt, after.position, after.attempt, after.sequence].map(Int64.init)
        }
        arguments.append(Int64(query.limit))
        let sql = """
            SELECT job_attempt, position, attempt, seq, at, line, dropped_lines, dropped_bytes, stream FROM stage_logs
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY job_attempt, position, attempt, seq LIMIT ?
            """
        let bound = arguments
        return try await read(doing: "read the log of job \(query.jobID)") { db in
            let statement = try RawStatement(db, sql)
            for (index, argument) in bound.enumerated() {
                try statement.bind(Int32(index + 1), argument)
            }
            return try statement.rows { row in
                let cursor = StageLogCursor(
                    jobAttempt: row.int(0), position: row.int(1), attempt: row.int(2), sequence: row.int(3))
                let at = row.date(4) ?? Date(timeIntervalSince1970: 0)
                if let lines = row.optionalInt(6) {
                    return StageLogEntry(
                        cursor: cursor, at: at, content: .dropped(lines: lines, bytes: row.optionalInt(7) ?? 0))
                }
                return StageLogEntry(
                    cursor: cursor, at: at, content: .line(Array(row.value(5) ?? Data())),
                    stream: row.text(8).flatMap(StageLogStream.init) ?? .stderr)
            }
        }
    }
}
