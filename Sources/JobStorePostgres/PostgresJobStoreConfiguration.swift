import Foundation
import JobStore
import JobValues

/// How to reach a PostgreSQL database for a ``PostgresJobStore``.
///
/// Made from a URL, as in `database:` of jobd.yaml:
///
/// ```
/// postgres://jobd@db.example.com:5432/jobs?sslmode=verify-full&schema=jobd
/// postgresql://jobd@/jobs?host=/run/postgresql           (a unix socket folder)
/// postgres://jobd@%2Frun%2Fpostgresql/jobs                (the same, as the host)
/// ```
///
/// The password comes from the URL, else `$PGPASSWORD`, else the file
/// `$CREDENTIALS_DIRECTORY/db-password` (systemd's `LoadCredential=`). It
/// is kept out of ``description``, `debugDescription`, reflection and every
/// error message.
public struct PostgresJobStoreConfiguration: Sendable {
    /// Whether and how the connection is encrypted (libpq's `sslmode`).
    public typealias SSLMode = PostgresURL.SSLMode
    /// Where the server listens.
    public typealias Endpoint = PostgresURL.Endpoint

    public var endpoint: Endpoint
    public var user: String
    public var database: String
    /// The schema jobd's tables live in (created if missing). Lowercase
    /// letters, digits and `_`, not starting with a digit. Default `jobd`.
    public var schema: String
    /// For TCP endpoints; a unix socket is never encrypted.
    public var sslMode: SSLMode
    /// The largest value in bytes; a bigger one is refused, never cut. Default 1 MiB.
    public var maxValueBytes: Int
    /// The most pooled connections this store opens (the LISTEN connection aside).
    public var maxConnections: Int
    /// The most writes one group-commit transaction holds.
    public var maxWritesPerTransaction: Int
    /// How long opening one connection may take.
    public var connectTimeout: Duration
    /// How long a call waits for a connection to the server before failing
    /// with ``JobStoreError/Code/unavailable``.
    public var operationTimeout: Duration
    /// How long a statement waits for a lock another session holds (the
    /// server's `lock_timeout`) before it fails with
    /// ``JobStoreError/Code/busy``. Default 10 s.
    public var lockTimeout: Duration
    /// How long the server lets one statement run (its `statement_timeout`)
    /// before it fails with ``JobStoreError/Code/busy``. A statement left
    /// unanswered for ``answerMargin`` longer than this means the
    /// connection went silent: it is closed and the call fails with
    /// ``JobStoreError/Code/unavailable``. Default 15 s.
    public var statementTimeout: Duration
    /// How long the server lets one of this store's sessions sit idle
    /// inside a transaction (its `idle_in_transaction_session_timeout`)
    /// before it ends the session and rolls the transaction back. It bounds
    /// how long a client that froze (SIGSTOP, a paused VM) or died between
    /// two statements of a transaction keeps the rows it touched locked.
    /// Default 10 s.
    public var idleInTransactionTimeout: Duration
    /// A file of PEM certificates that `sslmode=verify-full` checks the
    /// server's certificate against, instead of the system's roots (the
    /// URL's `sslrootcert=`).
    public var rootCertificates: String?
    /// Shown in `pg_stat_activity.application_name`.
    public var applicationName: String
    /// Whether opening the store creates the schema, or brings an older
    /// one up to this version (jobd, `copy-database`). Without, a missing
    /// schema is ``JobStoreError/Code/databaseMissing`` and an older one
    /// ``JobStoreError/Code/cannotOpen`` (jobctl: only jobd creates and
    /// upgrades it, so a `schema=` typo is an error rather than a new queue
    /// no jobd reads). Default true.
    public var createsSchema: Bool
    /// Never printed; see ``hasPassword``.
    var password: String?

    /// Whether a password was found (in the URL or the environment).
    public var hasPassword: Bool { password != nil }

    public init(
        endpoint: Endpoint, user: String, password: String?, database: String, schema: String = "jobd",
        sslMode: SSLMode = .prefer
    ) {
        self.endpoint = endpoint
        self.user = user
        self.password = password
        self.database = database
        self.schema = schema
        self.sslMode = sslMode
        maxValueBytes = 1 << 20
        maxConnections = 8
        maxWritesPerTransaction = 1024
        connectTimeout = .seconds(10)
        operationTimeout = .seconds(10)
        lockTimeout = .seconds(10)
        statementTimeout = .seconds(15)
        idleInTransactionTimeout = .seconds(10)
        applicationName = "jobd"
        createsSchema = true
    }

    /// How much longer than ``statementTimeout`` a statement may stay
    /// unanswered before its connection counts as silent.
    public static let answerMargin = Duration.seconds(5)

    /// How long a statement may stay unanswered before its connection counts as silent.
    var silenceBound: Duration { statementTimeout + Self.answerMargin }

    /// Replaces the password.
    public mutating func setPassword(_ password: String?) {
        self.password = password
    }

    /// Whether `text` is a PostgreSQL URL rather than a file path.
    public static func isURL(_ text: String) -> Bool { PostgresURL.isURL(text) }

    /// Reads `url` (``PostgresURL``), the password from it or else
    /// `environment`; a bad URL is refused with an
    /// ``JobStoreError/Code/invalidArgument`` error of one line that says what
    /// is wrong (and never shows the password).
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let parsed: PostgresURL
        do {
            parsed = try PostgresURL(url)
        } catch {
            throw JobStoreError(.invalidArgument, error.message)
        }
        self.init(
            endpoint: parsed.endpoint, user: parsed.user,
            password: try parsed.password ?? Self.environmentPassword(environment),
            database: parsed.database, schema: parsed.schema, sslMode: parsed.sslMode)
        rootCertificates = parsed.rootCertificates
        if let name = parsed.applicationName { applicationName = name }
        if let timeout = parsed.connectTimeout { connectTimeout = timeout }
    }

    static func checkSchemaName(_ schema: String) throws {
        do {
            try PostgresURL.checkSchemaName(schema)
        } catch {
            throw JobStoreError(.invalidArgument, error.message)
        }
    }

    /// `$PGPASSWORD`, else the systemd credential `db-password`.
    static func environmentPassword(_ environment: [String: String]) throws -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        guard let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty else { return nil }
        let path = folder + "/db-password"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JobStoreError(
                .permissionDenied,
                "cannot read the database password credential \(path): check LoadCredential= in the unit")
        }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text.isEmpty ? nil : text
    }
}

extension PostgresJobStoreConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL without its password: safe to log.
    public var description: String {
        PostgresURL.describe(
            user: user, hasPassword: password != nil, endpoint: endpoint, database: database, sslMode: sslMode,
            rootCertificates: rootCertificates, schema: schema)
    }

    public var debugDescription: String { description }

    /// Reflection (`dump`, `String(reflecting:)`) shows the description only.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
