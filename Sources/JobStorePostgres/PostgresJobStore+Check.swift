import Foundation
import JobStore
import JobValues
internal import Logging
internal import PostgresNIO

extension PostgresJobStore {
    /// What ``check(_:)`` found: the database can be used as it is, or
    /// once the first jobd has created or upgraded jobd's schema.
    public struct CheckReport: Sendable, CustomStringConvertible {
        /// The server's `server_version`.
        public var serverVersion: String
        /// The schema version there (0: jobd's tables do not exist yet).
        public var schemaVersion: Int
        /// The version this build creates or upgrades to.
        public var latestVersion: Int
        public var schema: String
        /// This host's wall clock minus the server's, in seconds (positive:
        /// ahead), read over one round trip.
        public var clockSkew: TimeInterval = 0

        /// Whether ``clockSkew`` is more than a second either way: jobd
        /// still decides by the server's clock, but the host's time is wrong.
        public var clockSkewIsReported: Bool { abs(clockSkew) > 1 }

        /// `within 1s of`, `300.0s ahead of`: how this host's clock stands to the server's.
        public var clockText: String {
            guard clockSkewIsReported else { return "within 1s of" }
            return String(format: "%.1fs ", abs(clockSkew)) + (clockSkew > 0 ? "ahead of" : "behind")
        }

        public var description: String {
            let state =
                switch schemaVersion {
                case 0: "schema \(schema) not created yet (jobd creates it at its first start)"
                case latestVersion: "schema \(schema) at version \(schemaVersion)"
                default:
                    "schema \(schema) at version \(schemaVersion) (jobd upgrades it to \(latestVersion) at its start)"
                }
            return "PostgreSQL \(serverVersion), \(state); this host's wall clock is \(clockText) the server's"
        }
    }

    /// Connects once and checks, changing nothing, that a jobd could use
    /// the database: the login, the encoding, the schema's version, and
    /// the privileges to create or upgrade the schema and to read and write
    /// every table of it. Each failure is one ``JobStoreError`` line:
    /// `permission-denied` (login refused, privileges missing),
    /// `unavailable` (no server there now), `cannot-open` (no such
    /// database, not UTF8), `schema-too-new`.
    /// `doing` names the check in its errors (jobd at its start checks the
    /// same things before it opens the store).
    public static func check(
        _ configuration: PostgresJobStoreConfiguration, doing what: String = "check the job database"
    ) async throws -> CheckReport {
        try PostgresJobStoreConfiguration.checkSchemaName(configuration.schema)
        let target = PostgresTarget(configuration)
        let connector = try PostgresConnector(configuration, logger: silent)
        let connection = try await connector.connect(target: target, doing: what)
        do {
            let session = PostgresSession(connection: connection, schema: configuration.schema, logger: silent)
            let migrator = PostgresMigrator(schema: configuration.schema, target: target, logger: silent)
            try await migrator.checkEncoding(session)
            let version = try await migrator.version(session)
            let latest = PostgresSchema.latestVersion
            if version > latest { throw migrator.tooNew(version, latest: latest) }
            try await checkPrivileges(session, version: version, latest: latest, target: target)
            let server = try await session.firstRow("SELECT current_setting('server_version')") {
                try $0.decode(String.self)
            }
            let sent = ContinuousClock.now
            let serverTime = try await session.firstRow("SELECT clock_timestamp()") { try $0.decode(Date.self) }
            let trip = ContinuousClock.now - sent
            // The server read its clock about halfway through the round trip.
            let skew = serverTime.map { Date().addingTimeInterval(-trip.timeInterval / 2).timeIntervalSince($0) } ?? 0
            try? await connection.close()
            return CheckReport(
                serverVersion: server ?? "?", schemaVersion: version, latestVersion: latest,
                schema: configuration.schema,
                clockSkew: skew)
        } catch {
            try? await connection.close()
            throw JobStoreError.wrapPostgres(error, target: target, doing: what)
        }
    }

    /// What the user lacks to create (`version` 0), upgrade or use the schema.
    static func checkPrivileges(
        _ session: PostgresSession, version: Int, latest: Int, target: PostgresTarget
    ) async throws {
        let schema = session.schema
        let user = try await session.firstRow("SELECT current_user::text") { try $0.decode(String.self) } ?? "?"
        let exists = try await session.execute("SELECT 1 FROM pg_namespace WHERE nspname = $1", schema) > 0
        if version < latest {
            let may =
                exists
                ? try await session.firstRow("SELECT has_schema_privilege($1, 'CREATE')", schema) {
                    try $0.decode(Bool.self)
                }
                : try await session.firstRow("SELECT has_database_privilege(current_database(), 'CREATE')") {
                    try $0.decode(Bool.self)
                }
            if may != true {
                let grant =
                    exists
                    ? "GRANT CREATE ON SCHEMA \(schema) TO \(user) (or make \(user) its owner)"
                    : "GRANT CREATE ON DATABASE \(PostgresTarget.identifier(target.database)) TO \(PostgresTarget.identifier(user)), or create the schema for it: CREATE SCHEMA \(schema) AUTHORIZATION \(user)"
                throw JobStoreError(
                    .permissionDenied,
                    "user \(user) may not \(exists ? "upgrade" : "create") the schema \(schema) in \(target): \(grant) "
                        + "(docs/operations.md, Preparing PostgreSQL)")
            }
            // Upgrading alters tables: only their owner (or a member of its role) may.
            guard version > 0 else { return }
            let foreign = try await session.rows(
                """
                SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND c.relkind = 'r' AND NOT pg_has_role(c.relowner, 'USAGE')
                ORDER BY 1
                """, schema
            ) { try $0.decode(String.self) }
            if !foreign.isEmpty {
                throw JobStoreError(
                    .permissionDenied,
                    "user \(user) may not upgrade the schema \(schema) in \(target): it does not own the table(s) "
                        + "\(foreign.joined(separator: ", ")). Start the new jobd once as the schema's owner")
            }
            return
        }
        let lacking = try await session.rows(
            """
            SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND (
                (c.relkind = 'r' AND NOT has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE'))
                OR (c.relkind = 'S' AND NOT has_sequence_privilege(c.oid, 'USAGE')))
            ORDER BY 1
            """, schema
        ) { try $0.decode(String.self) }
        let usage = try await session.firstRow("SELECT has_schema_privilege($1, 'USAGE')", schema) {
            try $0.decode(Bool.self)
        }
        if usage != true || !lacking.isEmpty {
            let what =
                usage != true
                ? "the schema \(schema) itself (USAGE)" : lacking.map { "\(schema).\($0)" }.joined(separator: ", ")
            throw JobStoreError(
                .permissionDenied,
                "user \(user) may not read and write \(what) in \(target): GRANT USAGE ON SCHEMA \(schema) TO \(user); "
                    + "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(user); "
                    + "GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(schema) TO \(user) (docs/operations.md)")
        }
    }
}
