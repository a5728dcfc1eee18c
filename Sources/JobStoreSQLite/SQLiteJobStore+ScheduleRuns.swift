import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore: JobScheduleRunStore {
    public func runSchedule(_ job: NewJob, by actor: ActionActor) async throws -> ScheduleRun {
        try NewJob.check([job], cap: cap)
        guard let instant = job.scheduledFor else {
            throw JobStoreError(.invalidArgument, "a schedule's run needs the instant it is for (scheduled_for)")
        }
        return try await write(atomic: true) { db in
            var job = job
            // The instant may be taken (a calendar occurrence, another run in
            // the same millisecond): the next free millisecond is used.
            for step in 0..<Self.runInstantTries {
                job.scheduledFor = instant.addingTimeInterval(Double(step) / 1000)
                let submission = try Self.insert([job], db)[0]
                guard submission.created else { continue }
                let action = try Self.insertOperatorAction(
                    .run, filter: "definition \(job.definition)", definition: job.definition, jobID: submission.id,
                    matched: 1, changed: 1, by: actor, db)
                try Self.markFired([submission.id], .manual, action: action, actor: actor, filter: "", db)
                return ScheduleRun(job: submission.id, scheduledFor: job.scheduledFor ?? instant, action: action)
            }
            throw JobStoreError(
                .invalidState,
                "every millisecond from \(Timestamp.text(instant)) on has a job of \(job.definition) already; try again"
            )
        }
    }

    public func backfill(_ jobs: [NewJob], filter: String, by actor: ActionActor) async throws -> BackfillOutcome {
        try NewJob.check(jobs, cap: cap)
        let definitions = Set(jobs.map(\.definition))
        try Self.require(definitions.count <= 1, "a backfill fires the occurrences of one definition")
        try Self.require(jobs.allSatisfy { $0.scheduledFor != nil }, "every backfilled job needs its occurrence")
        return try await write(atomic: true) { db in
            let submissions = try Self.insert(jobs, db)
            let made = submissions.filter(\.created).map(\.id)
            let action = try Self.insertOperatorAction(
                .backfill, filter: filter, definition: definitions.first, jobID: nil, matched: jobs.count,
                changed: made.count, by: actor, db)
            try Self.markFired(made, .backfill, action: action, actor: actor, filter: filter, db)
            return BackfillOutcome(made: made, existing: jobs.count - made.count, action: action)
        }
    }

    public func scheduledInstants(definition: String, from: Date, through: Date) async throws -> Set<Date> {
        try await read(doing: "read the scheduled jobs of \(definition)") { db in
            let statement = try RawStatement(
                db, "SELECT scheduled_for FROM jobs WHERE definition = ? AND scheduled_for BETWEEN ? AND ?")
            try statement.bind(1, definition)
            try statement.bind(2, Timestamp.text(from))
            try statement.bind(3, Timestamp.text(through))
            return Set(try statement.rows { $0.date(0) }.compactMap { $0 })
        }
    }

    public func scheduleTriggers(of ids: [Int64]) async throws -> [Int64: ScheduleTrigger] {
        guard !ids.isEmpty else { return [:] }
        return try await read(doing: "read how scheduled jobs were fired") { db in
            var triggers: [Int64: ScheduleTrigger] = [:]
            for chunk in stride(from: 0, to: ids.count, by: 500) {
                let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, fired_by FROM jobs
                        WHERE fired_by IS NOT NULL AND id IN (\(Columns.placeholders(part.count)))
                        """, arguments: StatementArguments(part))
                for row in rows {
                    if let trigger = ScheduleTrigger(rawValue: row[1] ?? "") { triggers[row[0]] = trigger }
                }
            }
            return triggers
        }
    }

    public func scheduleFiring(of id: Int64) async throws -> ScheduleFiring? {
        try await read(doing: "read how job \(id) was fired") { db in
            let statement = try RawStatement(
                db,
                """
                SELECT j.fired_by, a.id, a.actor, a.actor_uid, a.origin FROM jobs AS j
                LEFT JOIN actions AS a ON a.id = (
                    SELECT e.action_id FROM events AS e JOIN actions AS f ON f.id = e.action_id
                    WHERE e.job_id = j.id AND f.verb IN ('run', 'backfill') ORDER BY e.id LIMIT 1)
                WHERE j.id = ? AND j.fired_by IS NOT NULL
                """)
            try statement.bind(1, id)
            return try statement.firstRow { row -> ScheduleFiring? in
                guard let trigger = row.text(0).flatMap(ScheduleTrigger.init(rawValue:)) else { return nil }
                guard !row.isNull(1) else { return ScheduleFiring(trigger: trigger) }
                return ScheduleFiring(
                    trigger: trigger, action: row.int64(1),
                    actor: ActionActor(name: row.text(2) ?? "", uid: row.optionalInt(3), origin: row.text(4) ?? ""))
            } ?? nil
        }
    }

    public func recordOperatorAction(
        _ verb: OperatorVerb, filter: String, definition: String?, by actor: ActionActor
    ) async throws -> Int64 {
        try await write(atomic: true) { db in
            try Self.insertOperatorAction(
                verb, filter: filter, definition: definition, jobID: nil, matched: 0, changed: 0, by: actor, db)
        }
    }

    /// How many milliseconds after the asked instant a run may move to.
    static let runInstantTries = 10

    /// A finished `actions` row for an operator's action.
    private static func insertOperatorAction(
        _ verb: OperatorVerb, filter: String, definition: String?, jobID: Int64?, matched: Int, changed: Int,
        by actor: ActionActor, _ db: Database
    ) throws -> Int64 {
        let now = Timestamp.now()
        try db.execute(
            sql: """
                INSERT INTO actions (verb, actor, actor_uid, origin, filter, job_id, definition, matched, changed,
                                     last_id, highest_id, started_at, finished_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                verb.rawValue, actor.name, actor.uid, actor.origin, filter, jobID, definition, matched, changed,
                jobID ?? 0, jobID ?? 0, now, now,
            ])
        return db.lastInsertedRowID
    }

    /// Marks `ids` as fired by `trigger`, each with the event naming the action.
    private static func markFired(
        _ ids: [Int64], _ trigger: ScheduleTrigger, action: Int64, actor: ActionActor, filter: String,
        _ db: Database
    ) throws {
        guard !ids.isEmpty else { return }
        let message = trigger.eventMessage(actor: actor, action: action, filter: filter)
        let now = Timestamp.now()
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
            let list = Columns.placeholders(part.count)
            try db.execute(
                sql: "UPDATE jobs SET fired_by = ? WHERE id IN (\(list))",
                arguments: [trigger.rawValue] + StatementArguments(part))
            try db.execute(
                sql: """
                    INSERT INTO events (job_id, position, kind, message, created_at, action_id)
                    SELECT id, NULL, ?, ?, ?, ? FROM jobs WHERE id IN (\(list))
                    """,
                arguments: [ActionRecord.eventKind, message, now, action] + StatementArguments(part))
        }
    }
}
