import Foundation
import GRDB
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Rows written by hand with sqlite3: every column jobd reads, given every
/// kind of content jobd never writes there, read through every path of the
/// store. Each read either serves the row, leaves it out, or fails with a
/// `bad-row` error naming the table, the row and the column; none stops
/// the process, and the healthy job beside it is always served.
@Suite struct HandWrittenRowTests {
    /// One column of one table, and what to put in it.
    struct Case: CustomTestStringConvertible, Sendable {
        var table: String
        var column: String
        /// An SQL expression.
        var content: String
        /// Whether reading the column must fail (false: a value column,
        /// which holds any type, or content the query never selects).
        var bad = true

        var testDescription: String { "\(table).\(column) = \(content)" }
    }

    static let invalidText = "CAST(X'FFFE41' AS TEXT)"
    static let invalidBlob = "X'FFFE41'"

    static func text(_ table: String, _ column: String, nullable: Bool) -> [Case] {
        [
            Case(table: table, column: column, content: invalidBlob),
            Case(table: table, column: column, content: invalidText),
            Case(table: table, column: column, content: "X'6F6B'"),
        ]
            + (nullable ? [] : [Case(table: table, column: column, content: "NULL")])
    }

    static func integer(_ table: String, _ column: String, outOfRange: String = "1099511627776") -> [Case] {
        [
            Case(table: table, column: column, content: "'abc'"),
            Case(table: table, column: column, content: "1.5"),
            Case(table: table, column: column, content: invalidBlob),
            Case(table: table, column: column, content: "NULL"),
            Case(table: table, column: column, content: outOfRange),
        ]
    }

    static func time(_ table: String, _ column: String, nullable: Bool) -> [Case] {
        [
            Case(table: table, column: column, content: "'garbage'"),
            Case(table: table, column: column, content: "12.5"),
            Case(table: table, column: column, content: invalidBlob),
        ]
            + (nullable ? [] : [Case(table: table, column: column, content: "NULL")])
    }

    static func value(_ table: String, _ column: String) -> [Case] {
        ["1.5", "42", invalidBlob, invalidText].map { Case(table: table, column: column, content: $0, bad: false) }
    }

    static func state(_ table: String) -> [Case] {
        [
            Case(table: table, column: "state", content: "'bogus'"),
            Case(table: table, column: "state", content: invalidBlob),
            Case(table: table, column: "state", content: "NULL"),
        ]
    }

    static let cases: [Case] =
        text("jobs", "definition", nullable: false) + text("jobs", "pool", nullable: false) + state("jobs")
        + integer("jobs", "priority", outOfRange: "1e300") + [Case(table: "jobs", column: "priority", content: "'9x'")]
        + text("jobs", "idempotency_key", nullable: true)
        + value("jobs", "input") + value("jobs", "result") + text("jobs", "error", nullable: true)
        + integer("jobs", "attempt") + integer("jobs", "cancel_requested", outOfRange: "2") + integer("jobs", "claims")
        + [Case(table: "jobs", column: "claims", content: "-1")]
        + text("jobs", "lease_owner", nullable: true) + time("jobs", "lease_expires_at", nullable: true)
        + time("jobs", "run_at", nullable: false) + time("jobs", "created_at", nullable: false)
        + time("jobs", "started_at", nullable: true) + time("jobs", "finished_at", nullable: true)
        + time("jobs", "scheduled_for", nullable: true)
        + integer("stages", "position").filter { $0.content != "NULL" } + text("stages", "name", nullable: false)
        + text("stages", "kind", nullable: false)
        + state("stages") + value("stages", "value") + text("stages", "error", nullable: true)
        + integer("stages", "exit_code", outOfRange: "4294967296").filter { $0.content != "NULL" }
        + integer("stages", "attempts") + time("stages", "started_at", nullable: true)
        + text("stages", "error_code", nullable: true)
        // An event moved off its job by its job_id is no longer read as the job's.
        + [Case(table: "events", column: "job_id", content: invalidBlob, bad: false)]
        + integer("events", "position").filter { $0.content != "NULL" }
        + text("events", "kind", nullable: false) + text("events", "message", nullable: false)
        + time("events", "created_at", nullable: false)
        + integer("job_attempts", "attempt") + state("job_attempts") + value("job_attempts", "result")
        + text("job_attempts", "error", nullable: true) + time("job_attempts", "finished_at", nullable: true)
        + integer("stage_attempts", "attempt") + text("stage_attempts", "name", nullable: false)
        + state("stage_attempts")
        + integer("stage_attempts", "exit_code", outOfRange: "-4294967296")
        .filter { $0.content != "NULL" }

    /// The database every case starts from, made once: jobs 1 and 2 as
    /// submitted, and the schema's NOT NULL constraints taken out (as a
    /// user may do with writable_schema).
    static let template = Task<String, any Error> {
        let folder = NSTemporaryDirectory() + "jobstore-hand-written-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/template.sqlite"
        let setup = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        for _ in 1...2 {
            _ = try await setup.submit(job("report", pool: "p", stages: [StagePlan(name: "one", kind: "then")]))
        }
        try await setup.close()
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    PRAGMA writable_schema = ON;
                    UPDATE sqlite_schema SET sql = replace(sql, 'NOT NULL', '')
                        WHERE type = 'table' AND name IN ('jobs', 'stages', 'events', 'job_attempts', 'stage_attempts');
                    PRAGMA writable_schema = OFF;
                    PRAGMA journal_mode = DELETE;
                    """)
        }
        try queue.close()
        return path
    }

    /// Jobs 1 and 2 in pool `p`, pending (or running under an expired lease
    /// of a jobd that is gone), with a stage, an event and an earlier
    /// attempt each; then `change` made to job 1 alone, as sqlite3 would,
    /// with the schema's NOT NULL and CHECK constraints out of the way.
    static func database(running: Bool, _ change: Case, in folder: TemporaryFolder) async throws -> SQLiteJobStore {
        let path = folder.file("jobs.sqlite")
        try FileManager.default.copyItem(atPath: try await template.value, toPath: path)
        let edit = try DatabaseQueue(path: path)
        try await edit.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF")
            try db.inTransaction {
                let past = "2000-01-01T00:00:00.000Z"
                if running {
                    try db.execute(
                        sql: """
                            UPDATE jobs SET state = 'running', lease_owner = 'gone/1/x', lease_expires_at = '\(past)',
                                claims = 1, started_at = '\(past)'
                            """)
                    try db.execute(sql: "UPDATE stages SET state = 'running'")
                }
                for id in 1...2 {
                    try db.execute(
                        sql: """
                            UPDATE jobs SET attempt = 2, scheduled_for = '2000-01-01T00:00:00.00\(id)Z', finished_at = NULL WHERE id = \(id);
                            INSERT INTO events (job_id, position, kind, message, created_at)
                                VALUES (\(id), 0, 'note', 'hello', '\(past)');
                            INSERT INTO job_attempts (job_id, attempt, state, result, error, started_at, finished_at)
                                VALUES (\(id), 1, 'rejected', NULL, 'failed', '\(past)', '\(past)');
                            INSERT INTO stage_attempts (job_id, attempt, position, name, kind, state, value, error,
                                                        exit_code, attempts, started_at, finished_at)
                                VALUES (\(id), 1, 0, 'one', 'then', 'rejected', NULL, 'failed', 1, 1, '\(past)', '\(past)');
                            INSERT INTO schedule_marks (definition, schedule, fired_through) VALUES ('d\(id)', 's', '\(past)');
                            """)
                }
                let key = change.table == "jobs" ? "id" : "job_id"
                try db.execute(sql: "UPDATE \(change.table) SET \(change.column) = \(change.content) WHERE \(key) = 1")
                return .commit
            }
        }
        try edit.close()
        return try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
    }

    /// `error` is a bad-row error that names the case's table and column.
    static func expectNamed(_ error: JobStoreError, _ change: Case, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.code == .badRow, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains("the \(change.table) row "), "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains("its column \(change.column) holds"), "\(error)", sourceLocation: sourceLocation)
    }

    /// Runs `read`: a success, or a bad-row error naming the column.
    @discardableResult
    static func tolerate<T>(
        _ change: Case, sourceLocation: SourceLocation = #_sourceLocation, _ read: () async throws -> T
    ) async -> T? {
        do {
            return try await read()
        } catch let error as JobStoreError {
            expectNamed(error, change, sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// Each case with its job pending (claims read every column of the job
    /// and its stages); the columns the requeue of an expired lease reads
    /// also with the job running under one.
    static let variants: [(Case, Bool)] =
        cases.map { ($0, false) }
        + cases.filter {
            $0.table == "jobs"
                && ["state", "cancel_requested", "lease_owner", "lease_expires_at", "claims"].contains($0.column)
        }.map { ($0, true) }

    @Test(arguments: variants)
    func everyPathSurvivesTheRow(_ change: Case, running: Bool) async throws {
        let folder = try TemporaryFolder()
        let store = try await Self.database(running: running, change, in: folder)

        // Status and the dashboard's job page.
        let readsJob = change.table == "jobs" || change.table == "stages"
        if readsJob && change.bad {
            let error = await expectStoreError(.badRow) { try await store.job(1) }
            if let error {
                Self.expectNamed(error, change)
                #expect(error.jobID == 1 || change.column == "job_id")
            }
        } else {
            #expect(try await store.job(1)?.job.id == 1)
        }
        #expect(try await store.job(2)?.job.id == 2)
        if change.table == "events" && change.bad {
            if let error = await expectStoreError(.badRow, { try await store.events(of: 1) }) {
                Self.expectNamed(error, change)
            }
        } else {
            _ = try await store.events(of: 1)
        }
        #expect(try await store.events(of: 2).count == 1)
        if change.table.hasSuffix("_attempts") && change.bad {
            if let error = await expectStoreError(.badRow, { try await store.attemptHistory(of: 1) }) {
                Self.expectNamed(error, change)
            }
        } else {
            _ = try await store.attemptHistory(of: 1)
        }
        #expect(try await store.attemptHistory(of: 2).count == 1)

        // A list: the unreadable row beside the page, the others in it.
        for values in [true, false] {
            let page = try await store.list(JobQuery(limit: 10, values: values))
            #expect(page.jobs.map(\.id).contains(2))
            for row in page.unreadable {
                #expect(row.jobID == 1)
                #expect(row.message.contains("its column \(change.column) holds"), "\(row.message)")
            }
            #expect(page.jobs.count + page.unreadable.count == 2)
        }
        _ = try await store.list(JobQuery(states: [.pending, .running, .rejected], definition: "report", limit: 10))

        // The daemon's paths: start-up recovery, claims, renewal, requeue, schedules, metrics.
        let owners = try await store.leaseOwners()
        if running { #expect(owners["gone/1/x", default: 0] >= 1) }
        _ = try await store.expireLeases(of: Array(owners.keys))
        let requeued = try await store.requeueExpiredLeases(sparing: [])
        if running { #expect(requeued.contains(2)) }
        let claimed = try await store.claim(pool: "p", owner: "here/1/y", limit: 10, leaseDuration: .seconds(30))
        #expect(claimed.map(\.job.id).contains(2))
        #expect(Set(claimed.map(\.job.id)).count == claimed.count, "each job claimed once")
        _ = try await store.renew(claimed.map(\.lease), leaseDuration: .seconds(30))
        if let mine = claimed.first(where: { $0.job.id == 1 }) {
            _ = try await store.renew([mine.lease], leaseDuration: .seconds(30))
        }
        _ = try await store.nextRunAt(pool: "p")
        _ = try await store.countJobs(in: Set(JobState.allCases))
        _ = try await store.jobCountsByPool()
        _ = try await store.resolvedPerMinute(from: .distantPast, to: .distantFuture)
        _ = try await store.scheduleMarks()
        _ = try await store.latestScheduledJobs()
        await Self.tolerate(change) { try await store.requestCancellation(of: 1) }
        #expect(try await store.requestCancellation(of: 2) == .requested)

        // A job set aside while claiming or requeueing says why.
        if let job = try? await store.job(1)?.job, job.state == .rejected, let error = job.error,
            error.hasPrefix("quarantined")
        {
            #expect(error.contains("its column \(change.column) holds"), "\(error)")
        }
        try await store.close()
    }
}
