import Foundation
import JobStore
package import Logging
package import PostgresNIO

/// Creates the schema and brings it up to the last migration, in one
/// transaction under an advisory lock: jobds starting at once wait for each
/// other, and the second finds nothing left to do.
package struct PostgresMigrator {
    let schema: String
    let target: PostgresTarget
    let logger: Logger

    package init(schema: String, target: PostgresTarget, logger: Logger) {
        self.schema = schema
        self.target = target
        self.logger = logger
    }

    package func migrate(
        _ connection: PostgresConnection, migrations: [(version: Int, name: String, sql: String)]
    ) async throws {
        let session = PostgresSession(connection: connection, schema: schema, logger: logger)
        try await checkEncoding(session)
        let latest = migrations.last?.version ?? 0
        // A look without the lock first: nothing to do most of the time.
        if try await version(session) == latest { return }
        try await session.execute("BEGIN")
        do {
            try await session.execute("SELECT pg_advisory_xact_lock(hashtext($1)::bigint)", "jobd.migrate." + schema)
            let current = try await version(session)
            guard current <= latest else { throw tooNew(current, latest: latest) }
            if current == 0 {
                let exists = try await session.execute("SELECT 1 FROM pg_namespace WHERE nspname = $1", schema) > 0
                // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists.
                if !exists { try await session.execute("CREATE SCHEMA {s}") }
            }
            for migration in migrations where migration.version > current {
                for statement in Self.statements(migration.sql) { try await session.execute(statement) }
                try await session.execute(
                    "INSERT INTO {s}.schema_migrations (version, name) VALUES ($1, $2)", migration.version,
                    migration.name)
            }
            try await session.execute("COMMIT")
        } catch {
            await session.rollBack(after: error)
            throw error
        }
    }

    /// For a store that never creates or upgrades the schema (jobctl):
    /// the schema must be there, at `latest`.
    func requireCurrent(_ connection: PostgresConnection, latest: Int) async throws {
        let session = PostgresSession(connection: connection, schema: schema, logger: logger)
        try await checkEncoding(session)
        let current = try await version(session)
        if current > latest { throw tooNew(current, latest: latest) }
        if current == 0 {
            throw JobStoreError(
                .databaseMissing,
                "\(target) holds no job database: the schema \(schema) has no jobd tables. jobd creates them when it "
                    + "first starts there; start jobd, or check schema= in the URL of 'database' in jobd.yaml")
        }
        if current < latest {
            throw JobStoreError(
                .cannotOpen,
                "the schema \(schema) of \(target) has schema version \(current), older than this jobctl's \(latest): "
                    + "start the new jobd once (it upgrades the schema), then try again")
        }
    }

    func checkEncoding(_ session: PostgresSession) async throws {
        let encoding = try await session.firstRow("SELECT current_setting('server_encoding')") {
            try $0.decode(String.self)
        }
        guard encoding == "UTF8" else {
            throw JobStoreError(
                .cannotOpen,
                "cannot use \(target): its encoding is \(encoding ?? "?"), not UTF8, so text values would not "
                    + "keep their bytes. Create the database with ENCODING 'UTF8'")
        }
    }

    func tooNew(_ current: Int, latest: Int) -> JobStoreError {
        JobStoreError(
            .schemaTooNew,
            "the schema \(schema) of \(target) has schema version \(current), newer than this jobd's "
                + "\(latest): it was upgraded by a newer jobd. Use that version, or restore a backup made "
                + "before the upgrade.")
    }

    /// The last migration applied; 0 for a schema without jobd's tables.
    func version(_ session: PostgresSession) async throws -> Int {
        // A query of pg_tables, not to_regclass: after the advisory lock the
        // backend's catalog cache may not yet know a table another jobd has
        // just committed, while a statement's snapshot does.
        let table = try await session.firstRow(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = 'schema_migrations')",
            schema
        ) { try $0.decode(Bool.self) }
        guard table == true else { return 0 }
        return try await session.firstRow("SELECT coalesce(max(version), 0)::bigint FROM {s}.schema_migrations") {
            try $0.decode(Int.self)
        } ?? 0
    }

    /// The extended protocol runs one statement at a time: a migration's
    /// text, split at the semicolons that end its lines.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("--") { continue }
            current += line + "\n"
            if trimmed.hasSuffix(";") {
                statements.append(String(current.trimmingCharacters(in: .whitespacesAndNewlines).dropLast()))
                current = ""
            }
        }
        let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { statements.append(rest) }
        return statements
    }
}
