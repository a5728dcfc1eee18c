import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore: JobActionStore {
    public func unfinishedAction(_ verb: ActionVerb, filter: String) async throws -> ActionRecord? {
        try await read(doing: "read the unfinished actions") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(ActionColumns.list) FROM actions WHERE verb = ? AND filter = ? AND finished_at IS NULL
                    ORDER BY id LIMIT 1
                    """,
                arguments: [verb.rawValue, filter]
            ).map(ActionColumns.record)
        }
    }

    public func countMatching(
        _ selection: JobSelection, for verb: ActionVerb, ids: ClosedRange<Int64>
    ) async throws
        -> (count: Int, highestID: Int64)
    {
        let (conditions, arguments) = Self.conditions(selection, verb)
        return try await read(doing: "count the jobs to \(verb.rawValue)") { db in
            let count = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM jobs WHERE id BETWEEN ? AND ? AND \(conditions)",
                arguments: [ids.lowerBound, ids.upperBound] + arguments)
            let highest = try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) FROM jobs")
            return (count ?? 0, highest ?? 0)
        }
    }

    public func idsMatching(
        _ selection: JobSelection, for verb: ActionVerb, after afterID: Int64, limit: Int
    ) async throws
        -> [Int64]
    {
        try Self.require(limit > 0, "a page of ids holds at least one id, not \(limit)")
        let (conditions, arguments) = Self.conditions(selection, verb)
        return try await read(doing: "list the jobs to \(verb.rawValue)") { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM jobs WHERE id > ? AND \(conditions) ORDER BY id LIMIT ?",
                arguments: [afterID] + arguments + [limit])
        }
    }

    public func startAction(_ start: ActionStart) async throws -> ActionRecord {
        try await write(atomic: true) { db in
            try Self.insertAction(start, changed: 0, finished: false, db)
        }
    }

    public func continueAction(_ id: Int64, batchSize: Int) async throws -> ActionRecord {
        try Self.require(
            (1...ActionRecord.maxBatchSize).contains(batchSize),
            "a batch holds 1 to \(ActionRecord.maxBatchSize) jobs, not \(batchSize)")
        return try await write(atomic: true) { db in
            guard let action = try Self.action(id, db) else {
                throw JobStoreError(.invalidArgument, "there is no action \(id)")
            }
            if action.isFinished { return action }
            let (conditions, arguments) = Self.conditions(action.selection, action.verb)
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT id, state FROM jobs WHERE id > ? AND id <= ? AND \(conditions) ORDER BY id LIMIT ?",
                arguments: [action.lastID, action.highestID] + arguments + [batchSize])
            let ids: [Int64] = rows.map { $0[0] }
            if !ids.isEmpty {
                switch action.verb {
                case .retry: try Self.retryAll(ids, runAt: Timestamp.now(), db)
                case .cancel:
                    let pending = rows.filter { $0[1] == JobState.pending.rawValue }.map { $0[0] as Int64 }
                    try Self.cancelAll(ids, pending: pending, db)
                case .delete: try Self.deleteAll(ids, db)
                }
                if action.verb != .delete {
                    try Self.recordEvents(for: ids, of: action, db)
                }
            }
            let finished = ids.count < batchSize
            try db.execute(
                sql: """
                    UPDATE actions SET changed = changed + ?, last_id = ?, finished_at = ?
                    WHERE id = ?
                    """,
                arguments: [
                    ids.count, finished ? action.highestID : ids.last ?? action.lastID,
                    finished ? Timestamp.now() : nil, id,
                ])
            guard let updated = try Self.action(id, db) else {
                throw JobStoreError(.database, "action \(id) vanished while it ran")
            }
            return updated
        }
    }

    public func recordSingleAction(
        _ verb: ActionVerb, job id: Int64, by actor: ActionActor
    ) async throws -> ActionRecord {
        try await write(atomic: true) { db in
            let start = ActionStart(
                verb: verb, actor: actor, filter: "job \(id)", selection: JobSelection(jobID: id), matched: 1,
                highestID: id)
            let action = try Self.insertAction(start, changed: 1, finished: true, db)
            if verb != .delete { try Self.recordEvents(for: [id], of: action, db) }
            return action
        }
    }

    public func actions(limit: Int, before: Int64?) async throws -> [ActionRecord] {
        try Self.require((1...1000).contains(limit), "a page of actions holds 1 to 1000, not \(limit)")
        return try await read(doing: "read the actions") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(ActionColumns.list) FROM actions
                    WHERE id < ? AND verb IN ('retry', 'cancel', 'delete') ORDER BY id DESC LIMIT ?
                    """,
                arguments: [before ?? Int64.max, limit]
            ).map(ActionColumns.record)
        }
    }

    // MARK: The statements

    /// `selection` as SQL conditions on `jobs`, every value bound.
    private static func conditions(_ selection: JobSelection, _ verb: ActionVerb) -> (String, StatementArguments) {
        let states = selection.states(for: verb)
        guard !states.isEmpty else { return ("0", []) }
        var conditions = ["state IN (\(Columns.placeholders(states.count)))"]
        var arguments = StatementArguments(states.map(\.rawValue))
        if let id = selection.jobID {
            conditions.append("id = ?")
            arguments += [id]
        }
        if let pool = selection.pool {
            conditions.append("pool = ?")
            arguments += [pool]
        }
        if let parent = selection.parentID {
            conditions.append("parent_id = ?")
            arguments += [parent]
        }
        if let definition = selection.definition {
            conditions.append("definition = ?")
            arguments += [definition]
        }
        if let key = selection.key {
            conditions.append("idempotency_key = ?")
            arguments += [key]
        }
        if let since = selection.createdSince {
            conditions.append("created_at >= ?")
            arguments += [Timestamp.text(since)]
        }
        if let until = selection.createdUntil {
            conditions.append("created_at < ?")
            arguments += [Timestamp.text(until)]
        }
        if let match = selection.match {
            let query = SearchText.fts5Query(match)
            // No word: nothing matches (an empty MATCH is a syntax error to FTS5).
            conditions.append(query.isEmpty ? "0" : "id IN (SELECT rowid FROM jobs_search WHERE jobs_search MATCH ?)")
            if !query.isEmpty { arguments += [query] }
        }
        return (conditions.joined(separator: " AND "), arguments)
    }

    private static func insertAction(
        _ start: ActionStart, changed: Int, finished: Bool, _ db: Database
    ) throws -> ActionRecord {
        let selection = start.selection
        let now = Timestamp.now()
        let row = try Row.fetchOne(
            db,
            sql: """
                INSERT INTO actions (verb, actor, actor_uid, origin, filter, job_id, states, definition, key,
                                     created_since, created_until, match, matched, changed, last_id, highest_id,
                                     started_at, finished_at, parent_id, pool)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                RETURNING \(ActionColumns.list)
                """,
            arguments: [
                start.verb.rawValue, start.actor.name, start.actor.uid, start.actor.origin, start.filter,
                selection.jobID,
                JobSelection.statesText(selection.states), selection.definition, selection.key,
                selection.createdSince.map(Timestamp.text), selection.createdUntil.map(Timestamp.text), selection.match,
                start.matched, changed, finished ? start.highestID : 0, start.highestID, now, finished ? now : nil,
                selection.parentID, selection.pool,
            ])
        guard let row else { throw JobStoreError(.database, "the new action was not written") }
        return ActionColumns.record(row)
    }

    private static func action(_ id: Int64, _ db: Database) throws -> ActionRecord? {
        try Row.fetchOne(db, sql: "SELECT \(ActionColumns.list) FROM actions WHERE id = ?", arguments: [id])
            .map(ActionColumns.record)
    }

    /// As ``retry(_:delay:)`` does for one job, for every job of `ids` (all
    /// resolved: the caller selected them so): the attempt kept in
    /// `job_attempts` and `stage_attempts`, the job pending again from
    /// `runAt` with fresh stages and no wait for children. Bulk retries and
    /// a retried parent's children both come here.
    static func retryAll(_ ids: [Int64], runAt: String, _ db: Database) throws {
        let list = Columns.placeholders(ids.count)
        let arguments = StatementArguments(ids)
        try db.execute(
            sql: """
                INSERT INTO job_attempts (job_id, attempt, state, result, error, started_at, finished_at)
                SELECT id, attempt, state, result, error, started_at, finished_at FROM jobs WHERE id IN (\(list))
                """,
            arguments: arguments)
        try db.execute(
            sql: """
                INSERT INTO stage_attempts (job_id, attempt, position, name, kind, state, value, error,
                                            exit_code, attempts, started_at, finished_at, error_code)
                SELECT s.job_id, j.attempt, s.position, s.name, s.kind, s.state, s.value, s.error, s.exit_code,
                       s.attempts, s.started_at, s.finished_at, s.error_code
                FROM stages s JOIN jobs j ON j.id = s.job_id WHERE s.job_id IN (\(list))
                """,
            arguments: arguments)
        try db.execute(
            sql: """
                UPDATE stages SET state = 'pending', value = NULL, error = NULL, exit_code = NULL, error_code = NULL,
                    attempts = 0, started_at = NULL, finished_at = NULL
                WHERE job_id IN (\(list))
                """,
            arguments: arguments)
        try db.execute(
            sql: """
                UPDATE jobs SET state = 'pending', attempt = attempt + 1, result = NULL, error = NULL,
                    cancel_requested = 0, lease_owner = NULL, lease_expires_at = NULL, run_at = ?,
                    started_at = NULL, finished_at = NULL, waiting_on = 0, wait_stage = NULL
                WHERE id IN (\(list))
                """,
            arguments: [runAt] + arguments)
    }

    /// As ``requestCancellation(of:)`` does for one job: the pending jobs are cancelled, the running ones flagged.
    private static func cancelAll(_ ids: [Int64], pending: [Int64], _ db: Database) throws {
        if !pending.isEmpty {
            let list = Columns.placeholders(pending.count)
            try db.execute(
                sql: """
                    UPDATE jobs SET state = 'cancelled', cancel_requested = 1, finished_at = ?,
                        error = 'cancelled before it started'
                    WHERE id IN (\(list))
                    """,
                arguments: [Timestamp.now()] + StatementArguments(pending))
            let now = Timestamp.now()
            for id in pending {
                try resolveStages(of: id, as: .cancelled, db)
                // Wake-ups are left to the engines' polls here.
                _ = try cancelChildren(of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), now: now, db)
                _ = try jobsEnded([id], as: .cancelled, db)
            }
        }
        try db.execute(
            sql:
                "UPDATE jobs SET cancel_requested = 1 WHERE state = 'running' AND id IN (\(Columns.placeholders(ids.count)))",
            arguments: StatementArguments(ids))
    }

    /// Removes resolved jobs with their stages, history and events, as pruning does.
    private static func deleteAll(_ ids: [Int64], _ db: Database) throws {
        let list = Columns.placeholders(ids.count)
        let arguments = StatementArguments(ids)
        for table in ["stages", "stage_attempts", "job_attempts", "events"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE job_id IN (\(list))", arguments: arguments)
        }
        try db.execute(sql: "DELETE FROM jobs WHERE id IN (\(list))", arguments: arguments)
    }

    private static func recordEvents(for ids: [Int64], of action: ActionRecord, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO events (job_id, position, kind, message, created_at, action_id)
                SELECT id, NULL, ?, ?, ?, ? FROM jobs WHERE id IN (\(Columns.placeholders(ids.count)))
                """,
            arguments: [ActionRecord.eventKind, action.eventMessage, Timestamp.now(), action.id]
                + StatementArguments(ids))
    }
}

/// The `actions` columns jobd reads, and their decoding.
enum ActionColumns {
    static let list = """
        id, verb, actor, actor_uid, origin, filter, job_id, states, definition, key, created_since, created_until, \
        matched, changed, last_id, highest_id, started_at, finished_at, match, parent_id, pool
        """

    /// An `actions` row (its `verb` is one jobd knows: a check constraint holds it to them).
    static func record(_ row: Row) -> ActionRecord {
        let date: (String?) -> Date? = { $0.flatMap(Timestamp.date) }
        return ActionRecord(
            id: row[0], verb: ActionVerb(rawValue: row[1] ?? "") ?? .retry,
            actor: ActionActor(name: row[2] ?? "", uid: row[3], origin: row[4] ?? ""),
            filter: row[5] ?? "",
            selection: JobSelection(
                jobID: row[6], states: JobSelection.states(row[7]), definition: row[8], key: row[9],
                createdSince: date(row[10]),
                createdUntil: date(row[11]), match: row[18], parentID: row[19], pool: row[20]),
            matched: row[12] ?? 0, changed: row[13] ?? 0, lastID: row[14] ?? 0, highestID: row[15] ?? 0,
            startedAt: date(row[16]) ?? Date(timeIntervalSince1970: 0), finishedAt: date(row[17]))
    }
}
