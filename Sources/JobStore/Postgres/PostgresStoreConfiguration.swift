import Foundation

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
public struct PostgresStoreConfiguration: Sendable {
    /// Whether and how the connection is encrypted (libpq's `sslmode`).
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS if the server offers it, without checking its certificate; else plain. The default.
        case prefer
        /// TLS or nothing, without checking the server's certificate.
        case require
        /// TLS, with the certificate checked against the system's roots (or
        /// ``PostgresStoreConfiguration/rootCertificates``) and the host name.
        case verifyFull = "verify-full"
    }

    /// Where the server listens.
    public enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        /// The socket file itself: `<folder>/.s.PGSQL.<port>`.
        case unixSocket(path: String)
    }

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
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Why `text`, not a PostgreSQL URL, still looks meant as a URL (so it
    /// must not be taken for a SQLite file path), or nil: it holds `://`,
    /// or starts with a scheme like `postgresql:`, `postgre:` or `pg:` (in
    /// any case), or is a URL with white space before it. Never quotes
    /// `text`, which may hold a password.
    public static func mistypedURLProblem(_ text: String) -> String? {
        guard !isURL(text) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let hint = "a PostgreSQL URL starts with postgres:// or postgresql:// (lowercase), as in "
            + "postgres://USER@HOST/DATABASE; a SQLite database is a file path"
        if trimmed != text, isURL(trimmed) { return "it has white space around the PostgreSQL URL; remove it" }
        let scheme = trimmed.firstIndex(of: ":").map { trimmed[..<$0].lowercased() } ?? ""
        let isScheme = !scheme.isEmpty && scheme.first!.isLetter
            && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        if isScheme && (scheme.hasPrefix("postg") || scheme == "pg" || scheme == "pgsql") {
            return "it starts like a PostgreSQL URL but is not one: \(hint)"
        }
        if trimmed.contains("://") { return "it looks like a URL, but jobd takes no other kind: \(hint)" }
        return nil
    }

    /// Parses `url`; a bad one is refused with an ``JobStoreError/Code/invalidArgument``
    /// error of one line that says what is wrong (and never shows the password).
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let parsed = try PostgresURL(url)
        var port = 5432
        if let text = parsed.port ?? parsed.options["port"] {
            guard let number = Int(text), (1...65535).contains(number) else {
                throw Self.badURL("the port '\(text)' is not a number from 1 to 65535")
            }
            port = number
        }
        let host = parsed.options["host"] ?? parsed.host
        let endpoint: Endpoint
        if host.isEmpty || host.hasPrefix("/") {
            let folder = host.isEmpty ? "/run/postgresql" : host
            endpoint = .unixSocket(path: (folder.hasSuffix("/") ? folder : folder + "/") + ".s.PGSQL.\(port)")
        } else {
            endpoint = .tcp(host: host, port: port)
        }
        let user = parsed.options["user"] ?? parsed.user ?? Self.processUser()
        guard !user.isEmpty else { throw Self.badURL("it names no user (postgres://USER@HOST/DATABASE)") }
        let database = parsed.database.isEmpty ? user : parsed.database
        self.init(
            endpoint: endpoint, user: user,
            password: try parsed.password ?? parsed.options["password"] ?? Self.environmentPassword(environment),
            database: database)
        for (name, value) in parsed.options {
            switch name {
            case "host", "port", "user", "password":
                break
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    let modes = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Self.badURL("sslmode '\(value)' is not one of \(modes)")
                }
                sslMode = mode
            case "schema":
                schema = value
            case "application_name":
                applicationName = value
            case "sslrootcert":
                guard value.hasPrefix("/") else {
                    throw Self.badURL("sslrootcert '\(value)' is not an absolute path (a file of PEM CA certificates)")
                }
                rootCertificates = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else {
                    throw Self.badURL("connect_timeout '\(value)' is not a positive number of seconds")
                }
                connectTimeout = .seconds(seconds)
            default:
                throw Self.badURL(
                    "the option '\(name)' is unknown (known: sslmode, sslrootcert, host, port, user, schema, "
                        + "application_name, connect_timeout)")
            }
        }
        try Self.checkSchemaName(schema)
    }

    static func checkSchemaName(_ schema: String) throws {
        let bytes = Array(schema.utf8)
        let valid = !bytes.isEmpty && bytes.count <= 58 && !(48...57).contains(bytes[0])
            && bytes.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == UInt8(ascii: "_") }
        if !valid {
            throw JobStoreError(
                .invalidArgument,
                "the schema name '\(schema)' is not allowed: use lowercase letters, digits and _ "
                    + "(not starting with a digit, at most 58 characters)")
        }
    }

    static func badURL(_ what: String) -> JobStoreError {
        JobStoreError(.invalidArgument, "bad PostgreSQL URL: \(what)")
    }

    /// `$PGPASSWORD`, else the systemd credential `db-password`.
    static func environmentPassword(_ environment: [String: String]) throws -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        guard let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty else { return nil }
        let path = folder + "/db-password"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JobStoreError(
                .permissionDenied, "cannot read the database password credential \(path): check LoadCredential= in the unit")
        }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text.isEmpty ? nil : text
    }

    static func processUser() -> String {
        getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? ""
    }
}

extension PostgresStoreConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL without its password: safe to log.
    public var description: String {
        var text = "postgres://\(user)\(password == nil ? "" : ":***")@"
        switch endpoint {
        case let .tcp(host, port): text += (host.contains(":") ? "[\(host)]" : host) + ":\(port)/\(database)?sslmode=\(sslMode.rawValue)&"
        case let .unixSocket(path):
            text += "/\(database)?host=\((path as NSString).deletingLastPathComponent)&"
            let file = (path as NSString).lastPathComponent
            if file.hasPrefix(".s.PGSQL."), let port = Int(file.dropFirst(9)), port != 5432 { text += "port=\(port)&" }
        }
        if let rootCertificates { text += "sslrootcert=\(rootCertificates)&" }
        return text + "schema=\(schema)"
    }

    public var debugDescription: String { description }

    /// Reflection (`dump`, `String(reflecting:)`) shows the description only.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
