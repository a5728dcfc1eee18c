import Foundation
internal import GRDB
import JobStore
import JobStorePostgres
import JobStoreSQLite
internal import Logging
internal import PostgresNIO

/// What ``PostgresJobStore/copySQLiteDatabase(at:into:)`` copied.
public struct DatabaseCopyReport: Sendable, Hashable {
    public var jobs: Int
    public var stages: Int
    public var jobAttempts: Int
    public var stageAttempts: Int
    public var events: Int
    /// Rows of `stage_logs`: the lines, and the records of lines dropped.
    public var stageLogs: Int
    /// Operator actions (`actions`): the audit trail.
    public var actions: Int
    /// `jobctl submit --after` dependencies (`job_dependencies`).
    public var jobDependencies: Int
}

extension PostgresJobStore {
    /// Copies the SQLite database at `path` into the PostgreSQL schema of
    /// `configuration`, which must hold no job and no event (it is created if
    /// missing): every job with its stages, history, events, stage logs,
    /// child-job columns and `--after` dependencies, ids kept; the audit
    /// trail (actions, and the action behind each event); the schedules'
    /// marks (replacing those a jobd that started on the target made: it
    /// fired nothing there); the pauses and the starts in the rates'
    /// windows; and the id sequences set past the highest id
    /// SQLite ever gave out. One transaction: all or nothing. What is not
    /// copied, and why, is listed at ``CopiedTable/notCopied``. The SQLite file is brought up to this
    /// version's schema first if it is older (its WAL is then checkpointed);
    /// otherwise only read.
    ///
    /// Stop jobd first: jobs running then are copied as `running`, and are
    /// requeued by the first jobd on PostgreSQL once their lease expired.
    public static func copySQLiteDatabase(
        at path: String, into configuration: PostgresJobStoreConfiguration
    ) async throws -> DatabaseCopyReport {
        // Read without writing; an older file is first brought up to this jobd's schema.
        var source = try openReadOnly(path)
        if try read(source, path, { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }) < Schema.latestVersion {
            try? source.close()
            try await SQLiteJobStore(
                SQLiteJobStoreConfiguration(
                    path: path, checkpointInterval: nil, connections: .single, createIfMissing: false)
            ).close()
            source = try openReadOnly(path)
        }
        defer { try? source.close() }
        let logger = Logger(label: "jobd.copy", factory: { _ in SwiftLogNoOpLogHandler() })
        let target = PostgresTarget(configuration)
        let connector = try PostgresConnector(configuration, logger: logger)
        let connection = try await connector.connect(target: target, doing: "copy into the job database")
        do {
            try await PostgresMigrator(schema: configuration.schema, target: target, logger: logger)
                .migrate(connection, migrations: PostgresSchema.migrations)
            let session = PostgresSession(connection: connection, schema: configuration.schema, logger: logger)
            try await session.execute("BEGIN")
            let report = try await copy(from: source, path: path, into: session, target: target)
            try await session.execute("COMMIT")
            try await connection.close()
            return report
        } catch {
            _ = try? await connection.close()
            throw JobStoreError.wrapPostgres(error, target: target, doing: "copy \(path) into the job database")
        }
    }

    private static func copy(
        from source: DatabaseQueue, path: String, into session: PostgresSession, target: PostgresTarget
    ) async throws -> DatabaseCopyReport {
        let (jobs, events) =
            try await session.firstRow(
                "SELECT (SELECT count(*) FROM {s}.jobs), (SELECT count(*) FROM {s}.events)"
            ) { (try PostgresIndexedRow($0).int(0), try PostgresIndexedRow($0).int(1)) } ?? (0, 0)
        guard jobs == 0 && events == 0 else {
            throw JobStoreError(
                .invalidState,
                "cannot copy \(path) into \(target): it already holds \(jobs) job(s) and \(events) event(s); copy only "
                    + "into a schema without jobs (a new database, or another schema= in the URL)")
        }
        var counts: [String: Int] = [:]
        for table in CopiedTable.all {
            counts[table.name] = try await copy(table, from: source, path: path, into: session)
        }
        let report = DatabaseCopyReport(
            jobs: counts["jobs", default: 0], stages: counts["stages", default: 0],
            jobAttempts: counts["job_attempts", default: 0], stageAttempts: counts["stage_attempts", default: 0],
            events: counts["events", default: 0], stageLogs: counts["stage_logs", default: 0],
            actions: counts["actions", default: 0], jobDependencies: counts["job_dependencies", default: 0])
        for table in ["jobs", "events", "actions"] {
            // AUTOINCREMENT: ids of pruned jobs are never given out again.
            let highest = try read(source, path) { db in
                let used =
                    try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table])
                    ?? 0
                return max(used, try Int64.fetchOne(db, sql: "SELECT max(id) FROM \(table)") ?? 0)
            }
            if highest > 0 {
                // Past both: a schema whose jobs were all pruned gave out ids too.
                try await session.execute(
                    """
                    SELECT setval(sequence, greatest($2, coalesce(pg_sequence_last_value(sequence), 0)))
                    FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS sequence) AS s
                    """, "\"\(session.schema)\".\(table)", highest)
            }
        }
        return report
    }

    /// Copies `table` in pages of rows in key order, each page one multi-row INSERT.
    private static func copy(
        _ table: CopiedTable, from source: DatabaseQueue, path: String, into session: PostgresSession
    ) async throws -> Int {
        var copied = 0
        var after: [DatabaseValue]?
        while true {
            let rows = try read(source, path) { db in
                let keys = table.keys.joined(separator: ", ")
                let start =
                    after == nil ? "" : "WHERE (\(keys)) > (\(table.keys.map { _ in "?" }.joined(separator: ", ")))"
                return try Row.fetchAll(
                    db, sql: "SELECT \(table.sourceColumns) FROM \(table.name) \(start) ORDER BY \(keys) LIMIT 200",
                    arguments: StatementArguments(after ?? []))
            }
            guard let last = rows.last else { return copied }
            var binds = PostgresBindings(capacity: rows.count * table.targetWidth)
            var tuples: [String] = []
            for row in rows {
                var placeholders: [String] = []
                for (index, column) in table.columns.enumerated() {
                    let first = binds.count
                    for (offset, cast) in try column.kind.bind(row[index], into: &binds).enumerated() {
                        placeholders.append("$\(first + offset + 1)::\(cast)")
                    }
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            // Marks a jobd made on the target (it ran there, but fired
            // nothing: no job is there) give way to those copied; a pause
            // already made on the target stays as it was made.
            let conflict =
                switch table.name {
                case "schedule_marks":
                    " ON CONFLICT (definition, schedule) DO UPDATE SET fired_through = excluded.fired_through"
                case "pauses": " ON CONFLICT (scope, name) DO NOTHING"
                default: ""
                }
            _ = try await session.rows(
                session.query(
                    "INSERT INTO {s}.\(table.name) (\(table.targetColumns)) VALUES \(tuples.joined(separator: ", "))\(conflict)",
                    binds: binds)
            ) { _ in () }
            after = table.keys.map { key in last[key] }
            copied += rows.count
        }
    }

    private static func openReadOnly(_ path: String) throws -> DatabaseQueue {
        var readOnly = Configuration()
        readOnly.readonly = true
        do { return try DatabaseQueue(path: path, configuration: readOnly) } catch {
            throw JobStoreError.wrap(error, path: path, doing: "open the SQLite database to copy")
        }
    }

    private static func read<T>(_ source: DatabaseQueue, _ path: String, _ body: (Database) throws -> T) throws -> T {
        do { return try source.read(body) } catch {
            throw JobStoreError.wrap(error, path: path, doing: "read the SQLite database to copy")
        }
    }
}

/// A table as copied: its columns in SQLite, and how each becomes PostgreSQL's.
struct CopiedTable {
    enum Kind {
        case integer, text, time, flag
        /// One SQLite column (TEXT or BLOB) to two: `name text`, `name_bytes bytea`.
        case value

        /// Appends `value`'s binds; returns their types, in order.
        func bind(_ value: DatabaseValue, into binds: inout PostgresBindings) throws -> [String] {
            switch self {
            case .integer:
                binds.append(Int64.fromDatabaseValue(value))
                return ["int8"]
            case .text, .time:
                binds.append(String.fromDatabaseValue(value))
                return [self == .text ? "text" : "timestamptz"]
            case .flag:
                binds.append(Int64.fromDatabaseValue(value).map { $0 != 0 })
                return ["bool"]
            case .value:
                let split = PostgresStoredValue.split(StoredValue.data(value))
                binds.append(split.text)
                try binds.append(split.bytes)
                return ["text", "bytea"]
            }
        }
    }

    let name: String
    let columns: [(name: String, kind: Kind)]
    /// The primary key, in order.
    let keys: [String]

    // Quoted: some names (`match`, `filter`, `key`) are keywords of one SQL dialect or the other.
    var sourceColumns: String { columns.map { "\"\($0.name)\"" }.joined(separator: ", ") }
    var targetColumns: String {
        columns.flatMap { $0.kind == .value ? [$0.name, $0.name + "_bytes"] : [$0.name] }.map { "\"\($0)\"" }
            .joined(separator: ", ")
    }
    var targetWidth: Int { columns.count + columns.filter { $0.kind == .value }.count }

    /// The tables of the SQLite schema that are not copied, each with why.
    /// The views `pending_jobs` and `resolved_jobs` are queries over `jobs`.
    static let notCopied: [String: String] = [
        "schema_migrations": "the target keeps its own",
        "leaders": "leases of the processes on the SQLite file, void elsewhere",
        "jobs_search": "SQLite's FTS5 index, derived from jobs; PostgreSQL's is built from the copied rows",
    ]

    /// Every table of the SQLite schema that holds data, parents before the
    /// rows that refer to them; the others are in ``notCopied``.
    static let all = [
        CopiedTable(
            name: "jobs",
            columns: [
                ("id", .integer), ("definition", .text), ("pool", .text), ("state", .text), ("priority", .integer),
                ("idempotency_key", .text), ("input", .value), ("result", .value), ("error", .text),
                ("attempt", .integer),
                ("cancel_requested", .flag), ("claims", .integer), ("lease_owner", .text), ("lease_expires_at", .time),
                ("run_at", .time), ("created_at", .time), ("started_at", .time), ("finished_at", .time),
                ("scheduled_for", .time), ("limit_key", .text),
                // A child's parent and place, and what a waiting job waits for.
                ("parent_id", .integer), ("parent_stage", .integer), ("item_index", .integer),
                ("parent_attempt", .integer), ("waiting_on", .integer), ("wait_stage", .integer),
                ("wait_fail_fast", .flag), ("fired_by", .text),
                // The unique key a job holds, and how long it holds it.
                ("unique_key", .text), ("unique_until", .time), ("unique_while_running", .flag),
            ], keys: ["id"]),
        CopiedTable(name: "stages", columns: stageColumns, keys: ["job_id", "position"]),
        CopiedTable(
            name: "job_attempts",
            columns: [
                ("job_id", .integer), ("attempt", .integer), ("state", .text), ("result", .value), ("error", .text),
                ("started_at", .time), ("finished_at", .time),
            ], keys: ["job_id", "attempt"]),
        CopiedTable(
            name: "stage_attempts", columns: [("attempt", .integer)] + stageColumns,
            keys: ["job_id", "attempt", "position"]),
        CopiedTable(
            name: "events",
            columns: [
                ("id", .integer), ("job_id", .integer), ("position", .integer), ("kind", .text), ("message", .text),
                ("created_at", .time), ("action_id", .integer),
            ], keys: ["id"]),
        // How far each schedule has fired: without it, the first jobd on the
        // copy would catch up as after downtime.
        CopiedTable(
            name: "schedule_marks", columns: [("definition", .text), ("schedule", .text), ("fired_through", .time)],
            keys: ["definition", "schedule"]),
        CopiedTable(
            name: "stage_logs",
            columns: [
                ("job_id", .integer), ("job_attempt", .integer), ("position", .integer), ("attempt", .integer),
                ("seq", .integer), ("at", .time), ("line", .value), ("dropped_lines", .integer),
                ("dropped_bytes", .integer), ("stream", .text),
            ], keys: ["job_id", "job_attempt", "position", "attempt", "seq"]),
        CopiedTable(
            name: "actions",
            columns: [
                ("id", .integer), ("verb", .text), ("actor", .text), ("actor_uid", .integer), ("origin", .text),
                ("filter", .text), ("job_id", .integer), ("states", .text), ("definition", .text), ("key", .text),
                ("created_since", .time), ("created_until", .time), ("match", .text), ("matched", .integer),
                ("changed", .integer), ("last_id", .integer), ("highest_id", .integer), ("started_at", .time),
                ("finished_at", .time), ("parent_id", .integer), ("pool", .text),
            ], keys: ["id"]),
        CopiedTable(
            name: "job_dependencies", columns: [("job_id", .integer), ("after_id", .integer), ("any_end", .flag)],
            keys: ["after_id", "job_id"]),
        // Waiting parents' countdowns: without them no child's end would wake its parent.
        CopiedTable(
            name: "job_joins",
            columns: [
                ("job_id", .integer), ("stage", .integer), ("attempt", .integer), ("fail_fast", .flag),
                ("remaining", .integer),
            ], keys: ["job_id"]),
        // Pools and definitions an operator paused stay paused on the copy.
        CopiedTable(
            name: "pauses",
            columns: [
                ("scope", .text), ("name", .text), ("reason", .text), ("actor", .text), ("created_at", .time),
                ("until", .time), ("catch_up", .text),
            ], keys: ["scope", "name"]),
        // The starts in the rates' windows: without them a copy made within
        // a window would start as many jobs again. A job starts once per
        // claim, so no two rows are alike.
        CopiedTable(
            name: "rate_starts",
            columns: [("definition", .text), ("rate_key", .text), ("job_id", .integer), ("frees_at", .time)],
            keys: ["definition", "rate_key", "frees_at", "job_id"]),
    ]

    private static let stageColumns: [(name: String, kind: Kind)] = [
        ("job_id", .integer), ("position", .integer), ("name", .text), ("kind", .text), ("state", .text),
        ("value", .value),
        ("error", .text), ("exit_code", .integer), ("attempts", .integer), ("started_at", .time),
        ("finished_at", .time),
        ("error_code", .text),
    ]
}
