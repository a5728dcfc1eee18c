import Foundation
internal import GRDB
import JobStore
import JobValues

extension SQLiteJobStore {
    private func submitJobs(_ jobs: [NewJob]) async throws -> [Submission] {
        guard !jobs.isEmpty else { return [] }
        try NewJob.check(jobs, cap: cap)
        let writer = self.writer
        let large = SearchIndexReset.isLarge(jobs.lazy.map { $0.input?.count ?? 0 })
        return try await write(atomic: true) { db in
            let submissions = try Self.insert(jobs, db)
            if large { writer.searchIndexMayHaveGrown() }
            return submissions
        }
    }

    public func submit(_ jobs: [NewJob]) async throws -> [Submission] {
        try await submitJobs(jobs)
    }

    static func insert(_ jobs: [NewJob], _ db: Database) throws -> [Submission] {
        let clock = Date()
        let now = Timestamp.text(clock)
        let findKey = try RawStatement(db, "SELECT id FROM jobs WHERE definition = ? AND idempotency_key = ?")
        let findOccurrence = try RawStatement(db, "SELECT id FROM jobs WHERE definition = ? AND scheduled_for = ?")
        let insertJob = try RawStatement(
            db,
            """
            INSERT INTO jobs (definition, pool, priority, idempotency_key, input, run_at, created_at, scheduled_for,
                              limit_key, unique_key, unique_until, unique_while_running)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let insertStage = try RawStatement(db, "INSERT INTO stages (job_id, position, name, kind) VALUES (?, ?, ?, ?)")
        var submissions: [Submission] = []
        submissions.reserveCapacity(jobs.count)
        for job in jobs {
            if let key = job.idempotencyKey {
                try findKey.bind(1, job.definition)
                try findKey.bind(2, key)
                if let existing = try findKey.firstRow({ $0.int64(0) }) {
                    submissions.append(Submission(id: existing, created: false))
                    continue
                }
            }
            if let occurrence = job.scheduledFor {
                try findOccurrence.bind(1, job.definition)
                try findOccurrence.bind(2, Timestamp.text(occurrence))
                if let existing = try findOccurrence.firstRow({ $0.int64(0) }) {
                    submissions.append(Submission(id: existing, created: false))
                    continue
                }
            }
            try insertJob.bind(1, job.definition)
            try insertJob.bind(2, job.pool)
            try insertJob.bind(3, job.priority)
            try insertJob.bind(4, job.idempotencyKey)
            try insertJob.bind(5, value: job.input)
            try insertJob.bind(6, job.runAt.map(Timestamp.text) ?? now)
            try insertJob.bind(7, now)
            try insertJob.bind(8, job.scheduledFor.map(Timestamp.text))
            if let unique = job.unique {
                if let holder = try uniqueHolder(of: job, unique, now: now, db) {
                    submissions.append(Submission(id: holder, created: false, duplicate: true))
                    continue
                }
            }
            try insertJob.bind(9, job.limitKey)
            try insertJob.bind(10, job.unique?.key)
            try insertJob.bind(11, job.unique?.period.map { Timestamp.text(clock + $0.timeInterval) })
            try insertJob.bind(12, job.unique?.whileRunning == true ? 1 : 0)
            try insertJob.execute()
            let id = db.lastInsertedRowID
            for (position, stage) in job.stages.enumerated() {
                try insertStage.bind(1, id)
                try insertStage.bind(2, position)
                try insertStage.bind(3, stage.name)
                try insertStage.bind(4, stage.kind)
                try insertStage.execute()
            }
            if !job.after.isEmpty { try waitForDependencies(of: id, job, now: now, db) }
            submissions.append(Submission(id: id, created: true))
        }
        return submissions
    }

    /// The job that holds `unique.key` of `job`'s definition, after
    /// applying `unique.onConflict` to it; `nil` when none does, the key
    /// then released by a job that no longer holds it (its period over,
    /// and ended, or running under an expired lease — such a job is marked
    /// for cancelling, so that it ends instead of running again beside
    /// the new one when its lease is next looked at).
    private static func uniqueHolder(
        of job: NewJob, _ unique: UniqueKey, now: String, _ db: Database
    ) throws -> Int64? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT id, state, unique_until > ?1, lease_expires_at > ?1, unique_while_running FROM jobs
                    WHERE definition = ?2 AND unique_key = ?3
                    """,
                arguments: [now, job.definition, unique.key])
        else { return nil }
        let id: Int64 = row[0]
        let state = JobState(rawValue: row[1] ?? "")
        let inPeriod = (row[2] as Bool?) ?? false
        let liveLease = (row[3] as Bool?) ?? false
        let whileRunning: Bool = row[4]
        let runningHolds = state == .running && whileRunning
        if state == .pending || (runningHolds && liveLease) || inPeriod {
            guard state == .pending else { return id }
            switch unique.onConflict {
            case .skip: break
            case .replaceInput:
                let update = try RawStatement(db, "UPDATE jobs SET input = ?, limit_key = ? WHERE id = ?")
                try update.bind(1, value: job.input)
                try update.bind(2, job.limitKey)
                try update.bind(3, id)
                try update.execute()
            case .reschedule:
                try db.execute(
                    sql: "UPDATE jobs SET run_at = ? WHERE id = ?",
                    arguments: [job.runAt.map(Timestamp.text) ?? now, id])
            }
            return id
        }
        try db.execute(
            sql: "UPDATE jobs SET unique_key = NULL, cancel_requested = cancel_requested OR ? WHERE id = ?",
            arguments: [runningHolds, id])
        if runningHolds { try insertEvent(.uniqueKeyTaken(id), db) }
        return nil
    }

    /// Job `id` runs after `job.after`: it waits for those not ended yet,
    /// or is cancelled at once when one was rejected or cancelled (unless
    /// it runs after any end).
    private static func waitForDependencies(of id: Int64, _ job: NewJob, now: String, _ db: Database) throws {
        var open: [Int64] = []
        for after in Array(Set(job.after)).sorted() {
            let state = try String.fetchOne(db, sql: "SELECT state FROM jobs WHERE id = ?", arguments: [after])
            guard let state, let known = JobState(rawValue: state) else {
                throw JobStoreError(
                    .jobNotFound,
                    "cannot submit a job of \(job.definition) to run after job \(after): there is no such job",
                    jobID: after)
            }
            if !known.isResolved {
                open.append(after)
            } else if known != .fulfilled && !job.afterAnyEnd {
                try db.execute(
                    sql: """
                        UPDATE jobs SET state = 'cancelled', cancel_requested = 1, finished_at = ?, error = ?
                        WHERE id = ?
                        """,
                    arguments: [now, JobStoreError.dependencyFailedMessage(after, known), id])
                try resolveStages(of: id, as: .cancelled, db)
                return
            }
        }
        guard !open.isEmpty else { return }
        for after in open {
            try db.execute(
                sql: "INSERT INTO job_dependencies (job_id, after_id, any_end) VALUES (?, ?, ?)",
                arguments: [id, after, job.afterAnyEnd])
        }
        try db.execute(sql: "UPDATE jobs SET waiting_on = ? WHERE id = ?", arguments: [open.count, id])
    }
}
