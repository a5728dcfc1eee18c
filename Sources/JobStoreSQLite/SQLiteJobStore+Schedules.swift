import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore {
    public func scheduleMarks() async throws -> [ScheduleMark] {
        try await read(doing: "read the schedules' marks") { db in
            let statement = try RawStatement(db, "SELECT definition, schedule, fired_through FROM schedule_marks")
            return try statement.rows { row in
                ScheduleMark(
                    definition: row.text(0) ?? "", schedule: row.text(1) ?? "",
                    firedThrough: row.date(2) ?? .distantPast)
            }
        }
    }

    public func startSchedule(definition: String, schedule: String, at: Date) async throws -> Date {
        try await write(atomic: true) { db in
            let insert = try RawStatement(
                db,
                """
                INSERT INTO schedule_marks (definition, schedule, fired_through) VALUES (?, ?, ?)
                ON CONFLICT (definition, schedule) DO NOTHING
                """)
            try insert.bind(1, definition)
            try insert.bind(2, schedule)
            try insert.bind(3, Timestamp.text(at))
            try insert.execute()
            return try Self.mark(definition, schedule, db) ?? at
        }
    }

    public func fireOccurrence(_ occurrence: ScheduleOccurrence) async throws -> OccurrenceOutcome {
        try NewJob.check([occurrence.job], cap: cap)
        return try await write(atomic: true) { db in
            // One writer at a time (BEGIN IMMEDIATE): the check and the
            // writes below cannot interleave with another process's.
            if let mark = try Self.mark(occurrence.definition, occurrence.schedule, db), mark >= occurrence.at {
                return .alreadyDone
            }
            if occurrence.overlap != .allow, let running = try Self.unendedScheduledJob(occurrence.definition, db) {
                if occurrence.overlap == .queue { return .deferred }
                try Self.insertEvent(
                    NewEvent(jobID: running, kind: "schedule-skipped", message: occurrence.skippedMessage()), db)
                try Self.setMark(occurrence.definition, occurrence.schedule, occurrence.at, db)
                return .skipped(running: running)
            }
            let submission = try Self.insert([occurrence.job], db)[0]
            try Self.setMark(occurrence.definition, occurrence.schedule, occurrence.at, db)
            guard submission.created else {
                let event = NewEvent(
                    jobID: submission.id, kind: "schedule-skipped",
                    message: submission.duplicate
                        ? occurrence.duplicateMessage(job: submission.id)
                        : occurrence.coincidedMessage(job: submission.id))
                try Self.insertEvent(event, db)
                return submission.duplicate ? .duplicate(job: submission.id) : .coincided(job: submission.id)
            }
            return .fired(submission.id)
        }
    }

    public func skipOccurrences(definition: String, schedule: String, through: Date) async throws -> Bool {
        try await write(atomic: true) { db in
            if let mark = try Self.mark(definition, schedule, db), mark >= through { return false }
            try Self.setMark(definition, schedule, through, db)
            return true
        }
    }

    public func latestScheduledJobs() async throws -> [String: Job] {
        try await read(doing: "read the latest scheduled jobs") { db in
            // One seek per definition into `jobs_schedule` (definition, scheduled_for).
            let statement = try RawStatement(
                db,
                """
                SELECT \(Columns.job) FROM jobs
                WHERE scheduled_for IS NOT NULL AND (definition, scheduled_for) IN (
                    SELECT definition, max(scheduled_for) FROM jobs WHERE scheduled_for IS NOT NULL GROUP BY definition)
                """)
            // A row that cannot be read is left out: its schedule shows no
            // last job rather than none of the schedules showing.
            var unreadable: [JobStoreError] = []
            let jobs = try statement.rows(Columns.job, skipping: &unreadable)
            return Dictionary(jobs.map { ($0.definition, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private static func mark(_ definition: String, _ schedule: String, _ db: Database) throws -> Date? {
        let select = try RawStatement(
            db, "SELECT fired_through FROM schedule_marks WHERE definition = ? AND schedule = ?")
        try select.bind(1, definition)
        try select.bind(2, schedule)
        return try select.firstRow { $0.date(0) } ?? nil
    }

    /// Moves the mark forward to `at`. A stored value that is not one of
    /// jobd's timestamps (written by hand: `garbage` sorts after every
    /// date as text) is replaced, never kept as the larger.
    private static func setMark(_ definition: String, _ schedule: String, _ at: Date, _ db: Database) throws {
        let upsert = try RawStatement(
            db,
            """
            INSERT INTO schedule_marks (definition, schedule, fired_through) VALUES (?, ?, ?)
            ON CONFLICT (definition, schedule) DO UPDATE SET fired_through = CASE
                WHEN typeof(fired_through) = 'text' AND fired_through GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*'
                THEN max(fired_through, excluded.fired_through)
                ELSE excluded.fired_through END
            """)
        try upsert.bind(1, definition)
        try upsert.bind(2, schedule)
        try upsert.bind(3, Timestamp.text(at))
        try upsert.execute()
    }

    /// A scheduled job of `definition` that is pending or running, if any.
    private static func unendedScheduledJob(_ definition: String, _ db: Database) throws -> Int64? {
        let select = try RawStatement(
            db,
            """
            SELECT id FROM jobs
            WHERE definition = ? AND state IN ('pending', 'running') AND scheduled_for IS NOT NULL
            ORDER BY id LIMIT 1
            """)
        try select.bind(1, definition)
        return try select.firstRow { $0.int64(0) }
    }
}
