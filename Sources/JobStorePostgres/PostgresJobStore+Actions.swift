import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore: JobActionStore {
    public func unfinishedAction(_ verb: ActionVerb, filter: String) async throws -> ActionRecord? {
        try await read(doing: "read the unfinished actions") { session in
            try await session.firstRow(
                """
                SELECT \(PGActionColumns.list) FROM {s}.actions WHERE verb = $1 AND filter = $2 AND finished_at IS NULL
                ORDER BY id LIMIT 1
                """, verb.rawValue, filter, decode: PGActionColumns.record)
        }
    }

    public func countMatching(
        _ selection: JobSelection, for verb: ActionVerb, ids: ClosedRange<Int64>
    ) async throws
        -> (count: Int, highestID: Int64)
    {
        var binds = PostgresBindings()
        binds.append(ids.lowerBound)
        binds.append(ids.upperBound)
        let conditions = Self.conditions(selection, verb, &binds)
        return try await read(doing: "count the jobs to \(verb.rawValue)") { [binds] session in
            let count =
                try await session.rows(
                    session.query(
                        "SELECT count(*) FROM {s}.jobs WHERE id BETWEEN $1 AND $2 AND \(conditions)", binds: binds)
                ) { try PostgresIndexedRow($0).int(0) }.first ?? 0
            let highest =
                try await session.firstRow("SELECT coalesce(max(id), 0) FROM {s}.jobs") {
                    try PostgresIndexedRow($0).int64(0)
                } ?? 0
            return (count, highest)
        }
    }

    public func idsMatching(
        _ selection: JobSelection, for verb: ActionVerb, after afterID: Int64, limit: Int
    ) async throws
        -> [Int64]
    {
        try Self.require(limit > 0, "a page of ids holds at least one id, not \(limit)")
        var binds = PostgresBindings()
        binds.append(afterID)
        binds.append(limit)
        let conditions = Self.conditions(selection, verb, &binds)
        return try await read(doing: "list the jobs to \(verb.rawValue)") { [binds] session in
            try await session.rows(
                session.query(
                    "SELECT id FROM {s}.jobs WHERE id > $1 AND \(conditions) ORDER BY id LIMIT $2", binds: binds)
            ) { try PostgresIndexedRow($0).int64(0) }
        }
    }

    public func startAction(_ start: ActionStart) async throws -> ActionRecord {
        try await write(atomic: true) { session in
            try await Self.insertAction(start, changed: 0, finished: false, session)
        }
    }

    public func continueAction(_ id: Int64, batchSize: Int) async throws -> ActionRecord {
        try Self.require(
            (1...ActionRecord.maxBatchSize).contains(batchSize),
            "a batch holds 1 to \(ActionRecord.maxBatchSize) jobs, not \(batchSize)")
        return try await write(atomic: true) { session in
            // The row lock makes runs of one action from several processes take turns.
            guard
                let action = try await session.firstRow(
                    "SELECT \(PGActionColumns.list) FROM {s}.actions WHERE id = $1 FOR UPDATE", id,
                    decode: PGActionColumns.record)
            else {
                throw JobStoreError(.invalidArgument, "there is no action \(id)")
            }
            if action.isFinished { return action }
            var binds = PostgresBindings()
            binds.append(action.lastID)
            binds.append(action.highestID)
            binds.append(batchSize)
            let conditions = Self.conditions(action.selection, action.verb, &binds)
            let rows = try await session.rows(
                session.query(
                    """
                    SELECT id, state, pool FROM {s}.jobs WHERE id > $1 AND id <= $2 AND \(conditions)
                    ORDER BY id LIMIT $3 FOR UPDATE
                    """, binds: binds)
            ) { row in
                let row = PostgresIndexedRow(row)
                return (id: try row.int64(0), state: try row.text(1) ?? "", pool: try row.text(2) ?? "")
            }
            let ids = rows.map(\.id)
            if !ids.isEmpty {
                switch action.verb {
                case .retry:
                    try await Self.retryAll(ids, session)
                    for pool in Set(rows.map(\.pool)).sorted() { try await session.notify(.runnable(pool: pool)) }
                case .cancel:
                    let pending = rows.filter { $0.state == JobState.pending.rawValue }.map(\.id)
                    let running = rows.filter { $0.state == JobState.running.rawValue }.map(\.id)
                    try await Self.cancelAll(pending: pending, running: running, session)
                case .delete:
                    try await session.execute("DELETE FROM {s}.jobs WHERE id = ANY($1)", ids)
                }
                if action.verb != .delete { try await Self.recordEvents(for: ids, of: action, session) }
            }
            let finished = ids.count < batchSize
            guard
                let updated = try await session.firstRow(
                    """
                    UPDATE {s}.actions SET changed = changed + $1, last_id = $2,
                        finished_at = CASE WHEN $3 THEN now() END
                    WHERE id = $4
                    RETURNING \(PGActionColumns.list)
                    """, ids.count, finished ? action.highestID : ids.last ?? action.lastID, finished, id,
                    decode: PGActionColumns.record)
            else {
                throw JobStoreError(.database, "action \(id) vanished while it ran")
            }
            return updated
        }
    }

    public func recordSingleAction(
        _ verb: ActionVerb, job id: Int64, by actor: ActionActor
    ) async throws -> ActionRecord {
        try await write(atomic: true) { session in
            let start = ActionStart(
                verb: verb, actor: actor, filter: "job \(id)", selection: JobSelection(jobID: id), matched: 1,
                highestID: id)
            let action = try await Self.insertAction(start, changed: 1, finished: true, session)
            if verb != .delete { try await Self.recordEvents(for: [id], of: action, session) }
            return action
        }
    }

    public func actions(limit: Int, before: Int64?) async throws -> [ActionRecord] {
        try Self.require((1...1000).contains(limit), "a page of actions holds 1 to 1000, not \(limit)")
        return try await read(doing: "read the actions") { session in
            try await session.rows(
                """
                SELECT \(PGActionColumns.list) FROM {s}.actions
                WHERE id < $1 AND verb IN ('retry', 'cancel', 'delete') ORDER BY id DESC LIMIT $2
                """,
                before ?? Int64.max, limit, decode: PGActionColumns.record)
        }
    }

    // MARK: The statements

    /// `selection` as SQL conditions on `jobs`, its values appended to `binds`.
    private static func conditions(
        _ selection: JobSelection, _ verb: ActionVerb, _ binds: inout PostgresBindings
    ) -> String {
        let states = selection.states(for: verb)
        guard !states.isEmpty else { return "false" }
        binds.append(states.map(\.rawValue))
        var conditions = ["state = ANY($\(binds.count))"]
        if let id = selection.jobID {
            binds.append(id)
            conditions.append("id = $\(binds.count)")
        }
        if let pool = selection.pool {
            binds.append(pool)
            conditions.append("pool = $\(binds.count)")
        }
        if let parent = selection.parentID {
            binds.append(parent)
            conditions.append("parent_id = $\(binds.count)")
        }
        if let definition = selection.definition {
            binds.append(definition)
            conditions.append("definition = $\(binds.count)")
        }
        if let key = selection.key {
            binds.append(key)
            conditions.append("idempotency_key = $\(binds.count)")
        }
        if let since = selection.createdSince {
            binds.append(Timestamp.text(since))
            conditions.append("created_at >= $\(binds.count)::timestamptz")
        }
        if let until = selection.createdUntil {
            binds.append(Timestamp.text(until))
            conditions.append("created_at < $\(binds.count)::timestamptz")
        }
        if let match = selection.match {
            binds.append(SearchText.words(match).joined(separator: " "))
            conditions.append("\(PostgresSchema.searchVector) @@ plainto_tsquery('simple'::regconfig, $\(binds.count))")
        }
        return conditions.joined(separator: " AND ")
    }

    private static func insertAction(
        _ start: ActionStart, changed: Int, finished: Bool, _ session: PostgresSession
    ) async throws -> ActionRecord {
        let selection = start.selection
        let row = try await session.firstRow(
            """
            INSERT INTO {s}.actions (verb, actor, actor_uid, origin, filter, job_id, states, definition, key,
                                     created_since, created_until, matched, changed, last_id, highest_id, finished_at,
                                     match, parent_id, pool)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::timestamptz, $11::timestamptz, $12, $13, $14, $15,
                    CASE WHEN $16 THEN now() END, $17, $18, $19)
            RETURNING \(PGActionColumns.list)
            """,
            start.verb.rawValue, start.actor.name, start.actor.uid.map(Int64.init), start.actor.origin, start.filter,
            selection.jobID,
            JobSelection.statesText(selection.states), selection.definition, selection.key,
            selection.createdSince.map(Timestamp.text), selection.createdUntil.map(Timestamp.text), start.matched,
            changed,
            finished ? start.highestID : Int64(0), start.highestID, finished, selection.match, selection.parentID,
            selection.pool,
            decode: PGActionColumns.record)
        guard let row else { throw JobStoreError(.database, "the new action was not written") }
        return row
    }

    /// As ``retry(_:delay:)`` does for one job, for every job of `ids` (all resolved and locked: the caller
    /// selected them so).
    static func retryAll(_ ids: [Int64], _ session: PostgresSession) async throws {
        try await session.execute(
            """
            INSERT INTO {s}.job_attempts (job_id, attempt, state, result, result_bytes, error, started_at, finished_at)
            SELECT id, attempt, state, result, result_bytes, error, started_at, finished_at FROM {s}.jobs
            WHERE id = ANY($1)
            """, ids)
        try await session.execute(
            """
            INSERT INTO {s}.stage_attempts (job_id, attempt, position, name, kind, state, value, value_bytes, error,
                                            exit_code, attempts, started_at, finished_at, error_code)
            SELECT s.job_id, j.attempt, s.position, s.name, s.kind, s.state, s.value, s.value_bytes, s.error,
                   s.exit_code, s.attempts, s.started_at, s.finished_at, s.error_code
            FROM {s}.stages s JOIN {s}.jobs j ON j.id = s.job_id WHERE s.job_id = ANY($1)
            """, ids)
        try await session.execute(
            """
            UPDATE {s}.stages SET state = 'pending', value = NULL, value_bytes = NULL, error = NULL, exit_code = NULL,
                error_code = NULL, attempts = 0, started_at = NULL, finished_at = NULL
            WHERE job_id = ANY($1)
            """, ids)
        try await session.execute(
            """
            UPDATE {s}.jobs SET state = 'pending', attempt = attempt + 1, result = NULL, result_bytes = NULL,
                error = NULL, cancel_requested = false, lease_owner = NULL, lease_expires_at = NULL,
                run_at = now(), started_at = NULL, finished_at = NULL
            WHERE id = ANY($1)
            """, ids)
    }

    /// As ``requestCancellation(of:)`` does for one job: pending jobs cancelled, running ones flagged (their
    /// hosts hear of it at commit).
    private static func cancelAll(pending: [Int64], running: [Int64], _ session: PostgresSession) async throws {
        if !pending.isEmpty {
            try await session.execute(
                """
                UPDATE {s}.jobs SET state = 'cancelled', cancel_requested = true, finished_at = now(),
                    error = 'cancelled before it started'
                WHERE id = ANY($1)
                """, pending)
            for id in pending {
                try await resolveStages(of: id, as: .cancelled, session)
                try await cancelChildren(of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), session)
            }
            try await childrenEnded(pending.map { ($0, .cancelled) }, session)
            try await dependenciesEnded(pending.map { ($0, .cancelled) }, session)
        }
        if !running.isEmpty {
            try await session.execute("UPDATE {s}.jobs SET cancel_requested = true WHERE id = ANY($1)", running)
            for id in running { try await session.notify(.cancellationRequested(jobID: id)) }
        }
    }

    private static func recordEvents(for ids: [Int64], of action: ActionRecord, _ session: PostgresSession) async throws
    {
        try await session.execute(
            """
            INSERT INTO {s}.events (job_id, position, kind, message, action_id)
            SELECT id, NULL, $2, $3, $4 FROM {s}.jobs WHERE id = ANY($1)
            """, ids, ActionRecord.eventKind, action.eventMessage, action.id)
    }
}

/// The `actions` columns jobd reads, and their decoding.
enum PGActionColumns {
    static let list = """
        id, verb, actor, actor_uid, origin, filter, job_id, states, definition, key, created_since, created_until, \
        matched, changed, last_id, highest_id, started_at, finished_at, match, parent_id, pool
        """

    /// An `actions` row (its `verb` is one jobd knows: a check constraint holds it to them).
    static func record(_ row: PostgresRow) throws -> ActionRecord {
        let row = PostgresIndexedRow(row)
        return ActionRecord(
            id: try row.int64(0), verb: ActionVerb(rawValue: try row.text(1) ?? "") ?? .retry,
            actor: ActionActor(
                name: try row.text(2) ?? "", uid: try row.optionalInt64(3).map { Int($0) },
                origin: try row.text(4) ?? ""),
            filter: try row.text(5) ?? "",
            selection: JobSelection(
                jobID: try row.optionalInt64(6), states: JobSelection.states(try row.text(7)),
                definition: try row.text(8), key: try row.text(9),
                createdSince: try row.date(10), createdUntil: try row.date(11), match: try row.text(18),
                parentID: try row.optionalInt64(19), pool: try row.text(20)),
            matched: try row.int(12), changed: try row.int(13),
            lastID: try row.int64(14), highestID: try row.int64(15),
            startedAt: try row.date(16) ?? Date(timeIntervalSince1970: 0), finishedAt: try row.date(17))
    }
}
