import Foundation
internal import GRDB
import JobStore
import JobValues

extension SQLiteJobStore {
    public func requestCancellation(of id: Int64) async throws -> CancellationOutcome {
        let (outcome, woken) = try await write(atomic: true) { db -> (CancellationOutcome, [StoreWakeUp]) in
            let select = try RawStatement(db, "SELECT id, state FROM jobs WHERE id = ?")
            try select.bind(1, id)
            let found = try select.firstRow { raw -> JobState in
                var row = CheckedRow(raw, table: "jobs", names: ["id", "state"])
                row.identify([0], jobColumn: 0)
                return try row.state(1, JobState.self)
            }
            guard let state = found else {
                throw JobStoreError(.jobNotFound, "cannot cancel job \(id): there is no such job", jobID: id)
            }
            switch state {
            case .pending:
                try db.execute(
                    sql: """
                        UPDATE jobs SET state = 'cancelled', cancel_requested = 1, finished_at = ?,
                            error = 'cancelled before it started'
                        WHERE id = ?
                        """,
                    arguments: [Timestamp.now(), id])
                try Self.resolveStages(of: id, as: .cancelled, db)
                // A waiting parent's children go with it; a child's end counts toward its parent's join.
                let running = try Self.cancelChildren(
                    of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), now: Timestamp.now(), db)
                let woken = try Self.jobsEnded([id], as: .cancelled, db)
                return (.cancelled, woken + running.map { .cancellationRequested(jobID: $0) })
            case .running:
                try db.execute(sql: "UPDATE jobs SET cancel_requested = 1 WHERE id = ?", arguments: [id])
                return (.requested, [])
            case .fulfilled, .rejected, .cancelled:
                return (.alreadyResolved(state), [])
            }
        }
        localWakeUps.yield(woken)
        return outcome
    }

    public func retry(_ id: Int64, delay: Duration) async throws -> Job {
        try Self.require(
            delay >= .zero && Timestamp.isStorable(Date().addingTimeInterval(delay.timeInterval)),
            "cannot retry job \(id) after \(delay): the delay must be zero or more and end before 9999-12-31")
        return try await write(atomic: true) { db in
            let now = Date()
            let select = try RawStatement(db, "SELECT \(Columns.job) FROM jobs WHERE id = ?")
            try select.bind(1, id)
            guard let job = try select.firstRow(Columns.job) else {
                throw JobStoreError(.jobNotFound, "cannot retry job \(id): there is no such job", jobID: id)
            }
            guard job.state.isResolved else { throw JobStoreError.cannotRetry(id, job.state) }
            // Keep the attempt as it was, then start afresh.
            try db.execute(
                sql: """
                    INSERT INTO job_attempts (job_id, attempt, state, result, error, started_at, finished_at)
                    SELECT id, attempt, state, result, error, started_at, finished_at FROM jobs WHERE id = ?
                    """,
                arguments: [id])
            try db.execute(
                sql: """
                    INSERT INTO stage_attempts (job_id, attempt, position, name, kind, state, value, error,
                                                exit_code, attempts, started_at, finished_at, error_code)
                    SELECT job_id, ?, position, name, kind, state, value, error, exit_code, attempts,
                           started_at, finished_at, error_code
                    FROM stages WHERE job_id = ?
                    """,
                arguments: [job.attempt, id])
            try db.execute(
                sql: """
                    UPDATE stages SET state = 'pending', value = NULL, error = NULL, exit_code = NULL, error_code = NULL,
                        attempts = 0, started_at = NULL, finished_at = NULL
                    WHERE job_id = ?
                    """,
                arguments: [id])
            let runAt = Timestamp.text(now.addingTimeInterval(delay.timeInterval))
            let update = try RawStatement(
                db,
                """
                UPDATE jobs SET state = 'pending', attempt = attempt + 1, result = NULL, error = NULL,
                    cancel_requested = 0, lease_owner = NULL, lease_expires_at = NULL, run_at = ?,
                    started_at = NULL, finished_at = NULL
                WHERE id = ?
                RETURNING \(Columns.job)
                """)
            try update.bind(1, runAt)
            try update.bind(2, id)
            guard let updated = try update.firstRow(Columns.job) else {
                throw JobStoreError(.database, "job \(id) vanished while being retried", jobID: id)
            }
            return updated
        }
    }

    public func prune(finishedBefore date: Date) async throws -> Int {
        let cutoff = Timestamp.text(date)
        var total = 0
        // Small transactions, so that other writers are not held up long.
        while true {
            let deleted = try await write(atomic: true) { db in
                try Self.pruneChunk(before: cutoff, limit: 500, db)
            }
            total += deleted
            if deleted < 500 { return total }
        }
    }

    private static func pruneChunk(before cutoff: String, limit: Int, _ db: Database) throws -> Int {
        let ids = try Int64.fetchAll(
            db,
            sql: """
                SELECT id FROM jobs
                WHERE finished_at < ? AND state IN ('fulfilled', 'rejected', 'cancelled')
                LIMIT ?
                """,
            arguments: [cutoff, limit])
        guard !ids.isEmpty else { return 0 }
        let list = Columns.placeholders(ids.count)
        let arguments = StatementArguments(ids)
        for table in ["stages", "stage_attempts", "job_attempts", "events"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE job_id IN (\(list))", arguments: arguments)
        }
        try db.execute(sql: "DELETE FROM jobs WHERE id IN (\(list))", arguments: arguments)
        return ids.count
    }
}
