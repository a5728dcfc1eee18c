import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore: JobScheduleRunStore {
    public func runSchedule(_ job: NewJob, by actor: ActionActor) async throws -> ScheduleRun {
        try NewJob.check([job], cap: cap)
        guard let instant = job.scheduledFor else {
            throw JobStoreError(.invalidArgument, "a schedule's run needs the instant it is for (scheduled_for)")
        }
        return try await write(atomic: true) { session in
            var job = job
            // The instant may be taken (a calendar occurrence, another run in
            // the same millisecond): the next free millisecond is used.
            for step in 0..<Self.runInstantTries {
                job.scheduledFor = instant.addingTimeInterval(Double(step) / 1000)
                let submission = try await Self.insert(job, session)
                guard submission.created else { continue }
                let action = try await Self.insertOperatorAction(
                    .run, filter: "definition \(job.definition)", definition: job.definition, jobID: submission.id,
                    matched: 1, changed: 1, by: actor, session)
                try await Self.markFired([submission.id], .manual, action: action, actor: actor, filter: "", session)
                try await session.notify(.runnable(pool: job.pool))
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
        return try await write(atomic: true) { session in
            var made: [Int64] = []
            for job in jobs {
                let submission = try await Self.insert(job, session)
                if submission.created { made.append(submission.id) }
            }
            let action = try await Self.insertOperatorAction(
                .backfill, filter: filter, definition: definitions.first, jobID: nil, matched: jobs.count,
                changed: made.count, by: actor, session)
            try await Self.markFired(made, .backfill, action: action, actor: actor, filter: filter, session)
            for pool in Set(jobs.map(\.pool)).sorted() where !made.isEmpty {
                try await session.notify(.runnable(pool: pool))
            }
            return BackfillOutcome(made: made, existing: jobs.count - made.count, action: action)
        }
    }

    public func scheduledInstants(definition: String, from: Date, through: Date) async throws -> Set<Date> {
        try await read(doing: "read the scheduled jobs of \(definition)") { session in
            let instants = try await session.rows(
                """
                SELECT scheduled_for FROM {s}.jobs
                WHERE definition = $1 AND scheduled_for BETWEEN $2::timestamptz AND $3::timestamptz
                """, definition, PostgresStoredValue.time(from), PostgresStoredValue.time(through)
            ) { try PostgresIndexedRow($0).date(0) }
            return Set(instants.compactMap { $0 })
        }
    }

    public func scheduleTriggers(of ids: [Int64]) async throws -> [Int64: ScheduleTrigger] {
        guard !ids.isEmpty else { return [:] }
        return try await read(doing: "read how scheduled jobs were fired") { session in
            let rows = try await session.rows(
                "SELECT id, fired_by FROM {s}.jobs WHERE fired_by IS NOT NULL AND id = ANY($1)", ids
            ) { row in
                let row = PostgresIndexedRow(row)
                return (try row.int64(0), try row.text(1) ?? "")
            }
            var triggers: [Int64: ScheduleTrigger] = [:]
            for (id, text) in rows { if let trigger = ScheduleTrigger(rawValue: text) { triggers[id] = trigger } }
            return triggers
        }
    }

    public func scheduleFiring(of id: Int64) async throws -> ScheduleFiring? {
        try await read(doing: "read how job \(id) was fired") { session in
            try await session.firstRow(
                """
                SELECT j.fired_by, a.id, a.actor, a.actor_uid, a.origin FROM {s}.jobs AS j
                LEFT JOIN {s}.actions AS a ON a.id = (
                    SELECT e.action_id FROM {s}.events AS e JOIN {s}.actions AS f ON f.id = e.action_id
                    WHERE e.job_id = j.id AND f.verb IN ('run', 'backfill') ORDER BY e.id LIMIT 1)
                WHERE j.id = $1 AND j.fired_by IS NOT NULL
                """, id
            ) { row -> ScheduleFiring? in
                let row = PostgresIndexedRow(row)
                guard let trigger = try row.text(0).flatMap(ScheduleTrigger.init(rawValue:)) else { return nil }
                guard let action = try row.optionalInt64(1) else { return ScheduleFiring(trigger: trigger) }
                return ScheduleFiring(
                    trigger: trigger, action: action,
                    actor: ActionActor(
                        name: try row.text(2) ?? "", uid: try row.optionalInt(3), origin: try row.text(4) ?? ""))
            } ?? nil
        }
    }

    public func recordOperatorAction(
        _ verb: OperatorVerb, filter: String, definition: String?, by actor: ActionActor
    ) async throws -> Int64 {
        try await write(atomic: true) { session in
            try await Self.insertOperatorAction(
                verb, filter: filter, definition: definition, jobID: nil, matched: 0, changed: 0, by: actor, session)
        }
    }

    /// How many milliseconds after the asked instant a run may move to.
    static let runInstantTries = 10

    /// A finished `actions` row for an operator's action.
    private static func insertOperatorAction(
        _ verb: OperatorVerb, filter: String, definition: String?, jobID: Int64?, matched: Int, changed: Int,
        by actor: ActionActor, _ session: PostgresSession
    ) async throws -> Int64 {
        let id = try await session.firstRow(
            """
            INSERT INTO {s}.actions (verb, actor, actor_uid, origin, filter, job_id, definition, matched, changed,
                                     last_id, highest_id, finished_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, now())
            RETURNING id
            """,
            verb.rawValue, actor.name, actor.uid.map(Int64.init), actor.origin, filter, jobID, definition, matched,
            changed, jobID ?? 0
        ) { try PostgresIndexedRow($0).int64(0) }
        guard let id else { throw JobStoreError(.database, "the new action was not written") }
        return id
    }

    /// Marks `ids` as fired by `trigger`, each with the event naming the action.
    private static func markFired(
        _ ids: [Int64], _ trigger: ScheduleTrigger, action: Int64, actor: ActionActor, filter: String,
        _ session: PostgresSession
    ) async throws {
        guard !ids.isEmpty else { return }
        try await session.execute("UPDATE {s}.jobs SET fired_by = $2 WHERE id = ANY($1)", ids, trigger.rawValue)
        try await session.execute(
            """
            INSERT INTO {s}.events (job_id, position, kind, message, action_id)
            SELECT id, NULL, $2, $3, $4 FROM {s}.jobs WHERE id = ANY($1)
            """, ids, ActionRecord.eventKind, trigger.eventMessage(actor: actor, action: action, filter: filter),
            action)
    }
}
