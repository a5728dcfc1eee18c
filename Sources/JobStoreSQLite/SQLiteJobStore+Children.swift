import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore {
    public func wakeUps() -> AsyncStream<StoreWakeUp> {
        localWakeUps.stream()
    }

    public func joinChildren(
        _ join: ChildJoin, completion: @escaping @Sendable (Result<ChildJoinOutcome, any Error>) -> Void
    ) {
        let cap = self.cap
        let wakeUps = localWakeUps
        let writer = self.writer
        writer.enqueue(
            atomic: true,
            { db -> (ChildJoinOutcome, [StoreWakeUp]) in
                try NewJob.check(join.children, cap: cap)
                try Self.checkLease(join.lease, position: join.position, doing: "start the children of", db)
                let outcome = try Self.join(join, db)
                // A statement inserts up to 256 children: their inputs count together.
                if SearchIndexReset.isLarge(CollectionOfOne(join.children.reduce(0) { $0 + ($1.input?.count ?? 0) })) {
                    writer.searchIndexMayHaveGrown()
                }
                return outcome
            },
            completion: { result in
                if case let .success((_, woken)) = result { wakeUps.yield(woken) }
                completion(result.map(\.0))
            })
    }

    private static func join(_ join: ChildJoin, _ db: Database) throws -> (ChildJoinOutcome, [StoreWakeUp]) {
        let parentID = join.lease.jobID
        let now = Timestamp.text(join.at)
        let existing =
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM jobs WHERE parent_id = ? AND parent_stage = ?",
                arguments: [parentID, join.position]) ?? 0
        if existing < join.children.count {
            try insertChildren(join, now: now, db)
        }
        // A retried parent runs again the children that did not fulfil; those that did are kept.
        let stale = try Int64.fetchAll(
            db,
            sql: """
                SELECT id FROM jobs
                WHERE parent_id = ? AND parent_stage = ? AND parent_attempt < ? AND state IN ('rejected', 'cancelled')
                """,
            arguments: [parentID, join.position, join.parentAttempt])
        var woken: [StoreWakeUp] = []
        if !stale.isEmpty {
            for chunk in stale.chunked(500) { try retryAll(Array(chunk), runAt: now, db) }
            woken += join.children.map(\.pool).uniqued().map { StoreWakeUp.runnable(pool: $0) }
        }
        try db.execute(
            sql: "UPDATE jobs SET parent_attempt = ? WHERE parent_id = ? AND parent_stage = ? AND parent_attempt <> ?",
            arguments: [join.parentAttempt, parentID, join.position, join.parentAttempt])
        let tally = try Row.fetchOne(
            db,
            sql: """
                SELECT coalesce(sum(state IN ('pending', 'running')), 0), coalesce(sum(state IN ('rejected', 'cancelled')), 0)
                FROM jobs WHERE parent_id = ? AND parent_stage = ?
                """,
            arguments: [parentID, join.position])
        let unresolved: Int = tally?[0] ?? 0
        let failed: Int = tally?[1] ?? 0
        if unresolved > 0 && !(join.failFast && failed > 0) {
            try db.execute(
                sql: """
                    UPDATE jobs SET state = 'pending', waiting_on = ?, wait_stage = ?, wait_fail_fast = ?,
                        lease_expires_at = NULL
                    WHERE id = ?
                    """,
                arguments: [unresolved, join.position, join.failFast, parentID])
            // The countdown the children's ends decrement (``childEnded(_:as:_:)``).
            try db.execute(
                sql: """
                    INSERT INTO job_joins (job_id, stage, attempt, fail_fast, remaining) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (job_id) DO UPDATE SET stage = excluded.stage, attempt = excluded.attempt,
                        fail_fast = excluded.fail_fast, remaining = excluded.remaining
                    """,
                arguments: [parentID, join.position, join.parentAttempt, join.failFast, unresolved])
            try db.execute(
                sql: """
                    UPDATE stages SET state = 'running', attempts = ?, started_at = coalesce(started_at, ?),
                        finished_at = NULL, value = NULL, error = NULL, exit_code = NULL, error_code = NULL
                    WHERE job_id = ? AND position = ?
                    """,
                arguments: [join.attempt, now, parentID, join.position])
            return (.waiting(children: unresolved), woken)
        }
        try db.execute(sql: "DELETE FROM job_joins WHERE job_id = ?", arguments: [parentID])
        if unresolved > 0 {
            let cancelled = try cancelChildren(
                of: parentID, stage: join.position,
                reason: JobStoreError.siblingRejectedMessage(parentID, position: join.position), now: now, db)
            woken += cancelled.map { StoreWakeUp.cancellationRequested(jobID: $0) }
        }
        let statement = try RawStatement(
            db,
            """
            SELECT id, item_index, state, result, error, finished_at FROM jobs
            WHERE parent_id = ? AND parent_stage = ? ORDER BY item_index
            """)
        try statement.bind(1, parentID)
        try statement.bind(2, join.position)
        let outcomes = try statement.rows { raw -> ChildOutcome in
            var row = CheckedRow(
                raw, table: "jobs", names: ["id", "item_index", "state", "result", "error", "finished_at"])
            row.identify([0], jobColumn: 0)
            return ChildOutcome(
                id: try row.integer(0), itemIndex: try row.count(1), state: try row.state(2, JobState.self),
                result: row.value(3), error: try row.text(4), finishedAt: try row.date(5))
        }
        return (.settled(outcomes), woken)
    }

    /// Inserts the children not inserted yet, with their stages: many
    /// children a statement (``childRows(left:)``). The search index
    /// (`jobs_search`, FTS5) writes its pending terms out at the end of
    /// every statement that changes it inside a transaction, and that costs
    /// in proportion to its hash table — which grows with the most distinct
    /// terms ever pending at once on the connection and never shrinks. One
    /// statement per child paid it once per child.
    private static func insertChildren(_ join: ChildJoin, now: String, _ db: Database) throws {
        let insertStage = try RawStatement(db, "INSERT INTO stages (job_id, position, name, kind) VALUES (?, ?, ?, ?)")
        var start = 0
        while start < join.children.count {
            let rows = childRows(left: join.children.count - start)
            let insert = try RawStatement(db, insertChildrenSQL(rows: rows))
            try insert.bind(1, now)
            try insert.bind(2, join.lease.jobID)
            try insert.bind(3, join.position)
            try insert.bind(4, join.parentAttempt)
            for row in 0..<rows {
                let child = join.children[start + row]
                let first = Int32(5 + row * childColumns)
                try insert.bind(first, child.definition)
                try insert.bind(first + 1, child.pool)
                try insert.bind(first + 2, child.priority)
                try insert.bind(first + 3, value: child.input)
                try insert.bind(first + 4, start + row)
                try insert.bind(first + 5, child.limitKey)
            }
            // Only the rows inserted come back: a child already there (a
            // join run again after a crash) conflicts and is skipped.
            let inserted = try insert.rows { ($0.int64(0), $0.int(1)) }
            for (id, index) in inserted where join.children.indices.contains(index) {
                for (position, stage) in join.children[index].stages.enumerated() {
                    try insertStage.bind(1, id)
                    try insertStage.bind(2, position)
                    try insertStage.bind(3, stage.name)
                    try insertStage.bind(4, stage.kind)
                    try insertStage.execute()
                }
            }
            start += rows
        }
    }

    /// Parameters a child takes in ``insertChildrenSQL(rows:)``, after the
    /// four all rows share.
    private static let childColumns = 6

    /// How many children the next insert takes, of `left`: 256, else the
    /// largest power of two not above `left` — at most nine statements of
    /// distinct sizes in the connection's statement cache, and a few
    /// statements beside one per 256 children.
    static func childRows(left: Int) -> Int {
        left >= 256 ? 256 : 1 << (Int.bitWidth - 1 - left.leadingZeroBitCount)
    }

    /// An insert of `rows` children: ?1 the time, ?2 the parent, ?3 its
    /// stage, ?4 its attempt; then per child its definition, pool,
    /// priority, input, item index and limit key.
    static func insertChildrenSQL(rows: Int) -> String {
        let values = (0..<rows).map { row in
            let p = 5 + row * childColumns
            return "(?\(p), ?\(p + 1), ?\(p + 2), ?\(p + 3), ?1, ?1, ?2, ?3, ?\(p + 4), ?4, ?\(p + 5))"
        }
        return """
            INSERT INTO jobs (definition, pool, priority, input, run_at, created_at,
                              parent_id, parent_stage, item_index, parent_attempt, limit_key)
            VALUES \(values.joined(separator: ", "))
            ON CONFLICT (parent_id, parent_stage, item_index) WHERE parent_id IS NOT NULL DO NOTHING
            RETURNING id, item_index
            """
    }

    /// Cancels the children of `parentID` (of its stage `stage`, or all)
    /// and theirs, that have not ended: the pending ones at once, the
    /// running ones asked to stop. Gives the running ones' ids.
    static func cancelChildren(
        of parentID: Int64, stage: Int?, reason: String, now: String, _ db: Database
    ) throws -> [Int64] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                WITH RECURSIVE tree(id) AS (
                    SELECT id FROM jobs WHERE parent_id = ?1 AND (?2 IS NULL OR parent_stage = ?2)
                    UNION ALL
                    SELECT jobs.id FROM jobs JOIN tree ON jobs.parent_id = tree.id)
                SELECT jobs.id, jobs.state FROM jobs JOIN tree ON jobs.id = tree.id
                WHERE jobs.state IN ('pending', 'running')
                """,
            arguments: [parentID, stage])
        var running: [Int64] = []
        var pending: [Int64] = []
        for row in rows {
            let id: Int64 = row[0]
            if (row[1] as String?) == "running" { running.append(id) } else { pending.append(id) }
        }
        for chunk in pending.chunked(500) {
            try db.execute(
                sql: """
                    UPDATE jobs SET state = 'cancelled', cancel_requested = 1, finished_at = ?, error = ?,
                        waiting_on = 0
                    WHERE id IN (\(Columns.placeholders(chunk.count)))
                    """,
                arguments: [now, reason] + StatementArguments(Array(chunk)))
            for id in chunk { try resolveStages(of: id, as: .cancelled, db) }
        }
        for chunk in running.chunked(500) {
            try db.execute(
                sql: "UPDATE jobs SET cancel_requested = 1 WHERE id IN (\(Columns.placeholders(chunk.count)))",
                arguments: StatementArguments(Array(chunk)))
        }
        return running
    }

    /// Job `id` has just ended as `state`: if it is a child whose parent
    /// waits for it, one fewer to wait for — none when it was the last, or
    /// (fail-fast) was not fulfilled. Gives the parent's pool when the
    /// parent became runnable.
    ///
    /// Reads the child's row and writes the parent's `job_joins` row, both
    /// by key; the parent's `jobs` row (which holds its input, one item per
    /// child) is written only by the end that ends the wait. A countdown
    /// left by a parent that no longer waits (cancelled meanwhile) may
    /// reach 0 as well: the parent, not `pending` and waiting, is left as
    /// it is.
    static func childEnded(_ id: Int64, as state: JobState, _ db: Database) throws -> String? {
        let child = try RawStatement(
            db, "SELECT parent_id, parent_stage, parent_attempt FROM jobs WHERE id = ? AND parent_id IS NOT NULL")
        try child.bind(1, id)
        guard let (parentID, stage, attempt) = try child.firstRow({ ($0.int64(0), $0.int64(1), $0.int64(2)) })
        else { return nil }
        let countdown = try RawStatement(
            db,
            """
            UPDATE job_joins SET remaining = CASE WHEN ?1 AND fail_fast THEN 0 ELSE remaining - 1 END
            WHERE job_id = ?2 AND stage = ?3 AND attempt = ?4 AND remaining > 0
            RETURNING remaining
            """)
        try countdown.bind(1, state == .fulfilled ? 0 : 1)
        try countdown.bind(2, parentID)
        try countdown.bind(3, stage)
        try countdown.bind(4, attempt)
        guard try countdown.firstRow({ $0.int(0) }) == 0 else { return nil }
        let wake = try RawStatement(
            db, "UPDATE jobs SET waiting_on = 0 WHERE id = ? AND state = 'pending' AND waiting_on > 0 RETURNING pool")
        try wake.bind(1, parentID)
        return try wake.firstRow { $0.text(0) } ?? nil
    }

    /// Jobs `ids` have just ended as `state`: each counts toward its
    /// parent's join (``childEnded(_:as:_:)``) and toward the jobs that run
    /// after it (``dependencyEnded(_:as:now:_:)``). Gives the wake-ups.
    static func jobsEnded(_ ids: [Int64], as state: JobState, _ db: Database) throws -> [StoreWakeUp] {
        var pools: Set<String> = []
        let now = Timestamp.now()
        for id in ids {
            if let pool = try childEnded(id, as: state, db) { pools.insert(pool) }
            pools.formUnion(try dependencyEnded(id, as: state, now: now, db))
        }
        return pools.sorted().map { .runnable(pool: $0) }
    }

    /// Job `id` has just ended as `state`: the jobs that run after it wait
    /// for one fewer — or, when it did not fulfil, are cancelled (with
    /// theirs in turn) unless they run after any end. Gives the pools of
    /// jobs made runnable.
    static func dependencyEnded(_ id: Int64, as state: JobState, now: String, _ db: Database) throws -> Set<String> {
        var pools: Set<String> = []
        // Most jobs have none: one lookup in the primary key, the statement cached.
        let any = try RawStatement(db, "SELECT 1 FROM job_dependencies WHERE after_id = ? LIMIT 1")
        try any.bind(1, id)
        guard try any.firstRow({ _ in true }) != nil else { return pools }
        var ended: [(Int64, JobState)] = [(id, state)]
        while let (after, state) = ended.popLast() {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.job_id, d.any_end FROM job_dependencies d JOIN jobs j ON j.id = d.job_id
                    WHERE d.after_id = ? AND j.state = 'pending' AND j.waiting_on > 0
                    """,
                arguments: [after])
            for row in rows {
                let dependent: Int64 = row[0]
                let anyEnd: Bool = row[1]
                if state == .fulfilled || anyEnd {
                    let left = try Row.fetchOne(
                        db, sql: "UPDATE jobs SET waiting_on = waiting_on - 1 WHERE id = ? RETURNING waiting_on, pool",
                        arguments: [dependent])
                    if let left, (left[0] as Int) == 0 { pools.insert(left[1]) }
                } else {
                    try db.execute(
                        sql: """
                            UPDATE jobs SET state = 'cancelled', cancel_requested = 1, finished_at = ?, error = ?,
                                waiting_on = 0
                            WHERE id = ?
                            """,
                        arguments: [now, JobStoreError.dependencyFailedMessage(after, state), dependent])
                    try resolveStages(of: dependent, as: .cancelled, db)
                    ended.append((dependent, .cancelled))
                }
            }
        }
        return pools
    }

    public func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        try await read(doing: "read the children of job \(parentID)") { db in
            let statement = try RawStatement(
                db,
                """
                SELECT \(Columns.jobSummary) FROM jobs WHERE parent_id = ?
                ORDER BY parent_stage, item_index LIMIT ?
                """)
            try statement.bind(1, parentID)
            try statement.bind(2, max(0, limit))
            var unreadable: [JobStoreError] = []
            return try statement.rows(Columns.job, skipping: &unreadable)
        }
    }
}

extension Array {
    /// The elements in consecutive slices of at most `size` (bound lists stay under SQLite's limit on variables).
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

extension Array where Element: Hashable & Comparable {
    /// The distinct elements, sorted.
    func uniqued() -> [Element] { Set(self).sorted() }
}
