import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    public func scheduleMarks() async throws -> [ScheduleMark] {
        try await read(doing: "read the schedules' marks") { session in
            try await session.rows("SELECT definition, schedule, fired_through FROM {s}.schedule_marks") { row in
                let row = PostgresIndexedRow(row)
                return ScheduleMark(
                    definition: try row.text(0) ?? "", schedule: try row.text(1) ?? "",
                    firedThrough: try row.date(2) ?? .distantPast)
            }
        }
    }

    public func startSchedule(definition: String, schedule: String, at: Date) async throws -> Date {
        try await write(atomic: true) { session in
            try await session.execute(
                """
                INSERT INTO {s}.schedule_marks (definition, schedule, fired_through) VALUES ($1, $2, $3::timestamptz)
                ON CONFLICT (definition, schedule) DO NOTHING
                """, definition, schedule, PostgresStoredValue.time(at))
            return try await Self.lockMark(definition, schedule, session) ?? at
        }
    }

    public func fireOccurrence(_ occurrence: ScheduleOccurrence) async throws -> OccurrenceOutcome {
        try NewJob.check([occurrence.job], cap: cap)
        return try await write(atomic: true) { session in
            // The mark's row, locked until the commit: another host firing
            // this schedule waits here, then finds the mark moved.
            try await session.execute(
                """
                INSERT INTO {s}.schedule_marks (definition, schedule, fired_through)
                VALUES ($1, $2, $3::timestamptz - interval '1 millisecond')
                ON CONFLICT (definition, schedule) DO NOTHING
                """, occurrence.definition, occurrence.schedule, PostgresStoredValue.time(occurrence.at))
            if let mark = try await Self.lockMark(occurrence.definition, occurrence.schedule, session),
                PostgresStoredValue.milliseconds(mark) >= PostgresStoredValue.milliseconds(occurrence.at)
            {
                return .alreadyDone
            }
            #if DEBUG || JOBD_TEST_HOOKS
            try await PostgresFreezeHook.stopIfArmed(session)
            #endif
            if occurrence.overlap != .allow,
                let running = try await session.firstRow(
                    """
                    SELECT id FROM {s}.jobs
                    WHERE definition = $1 AND state IN ('pending', 'running') AND scheduled_for IS NOT NULL
                    ORDER BY id LIMIT 1
                    """, occurrence.definition, decode: { try PostgresIndexedRow($0).int64(0) }
                )
            {
                if occurrence.overlap == .queue { return .deferred }
                _ = try await Self.insertEvent(
                    NewEvent(jobID: running, kind: "schedule-skipped", message: occurrence.skippedMessage()), session)
                try await Self.setMark(occurrence.definition, occurrence.schedule, occurrence.at, session)
                return .skipped(running: running)
            }
            let submission = try await Self.insert(occurrence.job, session)
            try await Self.setMark(occurrence.definition, occurrence.schedule, occurrence.at, session)
            guard submission.created else {
                _ = try await Self.insertEvent(
                    NewEvent(
                        jobID: submission.id, kind: "schedule-skipped",
                        message: submission.duplicate
                            ? occurrence.duplicateMessage(job: submission.id)
                            : occurrence.coincidedMessage(job: submission.id)),
                    session)
                return submission.duplicate ? .duplicate(job: submission.id) : .coincided(job: submission.id)
            }
            try await session.notify(.runnable(pool: occurrence.job.pool))
            return .fired(submission.id)
        }
    }

    public func skipOccurrences(definition: String, schedule: String, through: Date) async throws -> Bool {
        try await write(atomic: true) { session in
            let moved = try await session.execute(
                """
                INSERT INTO {s}.schedule_marks AS mark (definition, schedule, fired_through) VALUES ($1, $2, $3::timestamptz)
                ON CONFLICT (definition, schedule) DO UPDATE SET fired_through = excluded.fired_through
                WHERE mark.fired_through < excluded.fired_through
                RETURNING 1
                """, definition, schedule, PostgresStoredValue.time(through))
            return moved > 0
        }
    }

    public func latestScheduledJobs() async throws -> [String: Job] {
        try await read(doing: "read the latest scheduled jobs") { session in
            let jobs = try await session.rows(
                """
                SELECT DISTINCT ON (definition) \(PostgresQueryColumns.job) FROM {s}.jobs
                WHERE scheduled_for IS NOT NULL
                ORDER BY definition, scheduled_for DESC
                """, decode: PostgresQueryColumns.job)
            return Dictionary(jobs.map { ($0.definition, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private static func lockMark(
        _ definition: String, _ schedule: String, _ session: PostgresSession
    ) async throws -> Date? {
        try await session.firstRow(
            "SELECT fired_through FROM {s}.schedule_marks WHERE definition = $1 AND schedule = $2 FOR UPDATE",
            definition, schedule
        ) { try PostgresIndexedRow($0).date(0) } ?? nil
    }

    private static func setMark(
        _ definition: String, _ schedule: String, _ at: Date, _ session: PostgresSession
    ) async throws {
        try await session.execute(
            """
            UPDATE {s}.schedule_marks SET fired_through = greatest(fired_through, $3::timestamptz)
            WHERE definition = $1 AND schedule = $2
            """, definition, schedule, PostgresStoredValue.time(at))
    }
}
