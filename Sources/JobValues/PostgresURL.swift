import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL database as `database:` of jobd.yaml names it:
///
/// ```
/// postgres://jobd@db.example.com:5432/jobs?sslmode=verify-full&schema=jobd
/// postgresql://jobd@/jobs?host=/run/postgresql           (a unix socket folder)
/// postgres://jobd@%2Frun%2Fpostgresql/jobs                (the same, as the host)
/// ```
///
/// Read for what it says, checked, nothing looked up: no password from the
/// environment (the PostgreSQL store's configuration adds that), no name
/// resolved, nothing connected to. The password, when the URL holds one, is
/// kept out of ``description`` and every error message.
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// Whether and how the connection is encrypted (libpq's `sslmode`).
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS if the server offers it, without checking its certificate; else plain. The default.
        case prefer
        /// TLS or nothing, without checking the server's certificate.
        case require
        /// TLS, with the certificate checked against the system's roots (or
        /// `sslrootcert=`) and the host name.
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
    /// The password the URL holds (`user:password@`, or `?password=`).
    public var password: String?
    public var database: String
    /// The schema jobd's tables live in. Default `jobd`.
    public var schema = "jobd"
    public var sslMode = SSLMode.prefer
    /// `sslrootcert=`: a file of PEM CA certificates, an absolute path.
    public var rootCertificates: String?
    /// `application_name=`, if given.
    public var applicationName: String?
    /// `connect_timeout=`, if given.
    public var connectTimeout: Duration?

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
        let hint =
            "a PostgreSQL URL starts with postgres:// or postgresql:// (lowercase), as in "
            + "postgres://USER@HOST/DATABASE; a SQLite database is a file path"
        if trimmed != text, isURL(trimmed) { return "it has white space around the PostgreSQL URL; remove it" }
        let scheme = trimmed.firstIndex(of: ":").map { trimmed[..<$0].lowercased() } ?? ""
        let isScheme =
            !scheme.isEmpty && scheme.first!.isLetter
            && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        if isScheme && (scheme.hasPrefix("postg") || scheme == "pg" || scheme == "pgsql") {
            return "it starts like a PostgreSQL URL but is not one: \(hint)"
        }
        if trimmed.contains("://") { return "it looks like a URL, but jobd takes no other kind: \(hint)" }
        return nil
    }

    /// Parses and checks `url`; a bad one is refused with one line that says
    /// what is wrong (and never shows the password). Without a user in the
    /// URL, the user this process runs as.
    public init(_ url: String) throws(PostgresURLError) {
        let parsed = try PostgresURLParts(url)
        var port = 5432
        if let text = parsed.port ?? parsed.options["port"] {
            guard let number = Int(text), (1...65535).contains(number) else {
                throw .bad("the port '\(text)' is not a number from 1 to 65535")
            }
            port = number
        }
        let host = parsed.options["host"] ?? parsed.host
        if host.isEmpty || host.hasPrefix("/") {
            let folder = host.isEmpty ? "/run/postgresql" : host
            endpoint = .unixSocket(path: (folder.hasSuffix("/") ? folder : folder + "/") + ".s.PGSQL.\(port)")
        } else {
            endpoint = .tcp(host: host, port: port)
        }
        user = parsed.options["user"] ?? parsed.user ?? Self.processUser()
        guard !user.isEmpty else { throw .bad("it names no user (postgres://USER@HOST/DATABASE)") }
        database = parsed.database.isEmpty ? user : parsed.database
        password = parsed.password ?? parsed.options["password"]
        for (name, value) in parsed.options {
            switch name {
            case "host", "port", "user", "password":
                break
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    let modes = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .bad("sslmode '\(value)' is not one of \(modes)")
                }
                sslMode = mode
            case "schema":
                schema = value
            case "application_name":
                applicationName = value
            case "sslrootcert":
                guard value.hasPrefix("/") else {
                    throw .bad("sslrootcert '\(value)' is not an absolute path (a file of PEM CA certificates)")
                }
                rootCertificates = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else {
                    throw .bad("connect_timeout '\(value)' is not a positive number of seconds")
                }
                connectTimeout = .seconds(seconds)
            default:
                throw .bad(
                    "the option '\(name)' is unknown (known: sslmode, sslrootcert, host, port, user, schema, "
                        + "application_name, connect_timeout)")
            }
        }
        try Self.checkSchemaName(schema)
    }

    /// Refuses a schema name jobd could not use unquoted in every statement.
    public static func checkSchemaName(_ schema: String) throws(PostgresURLError) {
        let bytes = Array(schema.utf8)
        let valid =
            !bytes.isEmpty && bytes.count <= 58 && !(48...57).contains(bytes[0])
            && bytes.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == UInt8(ascii: "_") }
        if !valid {
            throw PostgresURLError(
                "the schema name '\(schema)' is not allowed: use lowercase letters, digits and _ "
                    + "(not starting with a digit, at most 58 characters)")
        }
    }

    /// The URL without its password: safe to log.
    public var description: String {
        Self.describe(
            user: user, hasPassword: password != nil, endpoint: endpoint, database: database, sslMode: sslMode,
            rootCertificates: rootCertificates, schema: schema)
    }

    /// A database as a URL without its password, in one form whatever the
    /// URL it was read from.
    public static func describe(
        user: String, hasPassword: Bool, endpoint: Endpoint, database: String, sslMode: SSLMode,
        rootCertificates: String?, schema: String
    ) -> String {
        var text = "postgres://\(user)\(hasPassword ? ":***" : "")@"
        switch endpoint {
        case let .tcp(host, port):
            text += (host.contains(":") ? "[\(host)]" : host) + ":\(port)/\(database)?sslmode=\(sslMode.rawValue)&"
        case let .unixSocket(path):
            text += "/\(database)?host=\((path as NSString).deletingLastPathComponent)&"
            let file = (path as NSString).lastPathComponent
            if file.hasPrefix(".s.PGSQL."), let port = Int(file.dropFirst(9)), port != 5432 { text += "port=\(port)&" }
        }
        if let rootCertificates { text += "sslrootcert=\(rootCertificates)&" }
        return text + "schema=\(schema)"
    }

    static func processUser() -> String {
        getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? ""
    }
}

/// A `postgres://` URL that cannot be used; ``message`` is one line for a
/// user, without the password.
public struct PostgresURLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    static func bad(_ what: String) -> PostgresURLError {
        PostgresURLError("bad PostgreSQL URL: \(what)")
    }

    public var description: String { message }
}

/// The parts of a `postgres://` URL, percent-decoded; no meaning given yet.
struct PostgresURLParts {
    var user: String?
    var password: String?
    /// A host name, an IP address, or a unix socket folder (`/run/postgresql`); may be empty.
    var host: String
    var port: String?
    var database: String
    var options: [String: String]

    init(_ url: String) throws(PostgresURLError) {
        let text = url.trimmingCharacters(in: .whitespaces)
        guard let schemeEnd = text.range(of: "://") else {
            throw PostgresURLError.bad("it does not start with postgres:// or postgresql://")
        }
        let scheme = text[..<schemeEnd.lowerBound]
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresURLError.bad("the scheme '\(scheme)' is not postgres or postgresql")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        if rest.contains("#") { throw PostgresURLError.bad("a #fragment has no meaning in it") }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var authority = rest
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        }
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decode(userInfo[..<colon], "the user name")
                password = try Self.decode(userInfo[userInfo.index(after: colon)...], "the password")
            } else {
                user = try Self.decode(userInfo, "the user name")
            }
            if user?.isEmpty == true { user = nil }
        }
        if authority.contains(",") {
            throw PostgresURLError.bad("it names several hosts; give one (a load balancer or DNS name for failover)")
        }
        var hostPart = authority
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw PostgresURLError.bad("the IPv6 address has no closing ]")
            }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                port = String(after.dropFirst())
            } else if !after.isEmpty {
                throw PostgresURLError.bad("'\(after)' after the IPv6 address is not :PORT")
            }
        } else if authority.filter({ $0 == ":" }).count > 1 {
            throw PostgresURLError.bad(
                "the host looks like an IPv6 address without brackets: write it in brackets, postgres://USER@[::1]:5432/DATABASE"
            )
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            port = String(authority[authority.index(after: colon)...])
        }
        host = try Self.decode(hostPart, "the host")
        if port?.isEmpty == true { port = nil }
        if path.contains("/") {
            throw PostgresURLError.bad(
                "the path '/\(path)' is not /DATABASE (give a unix socket folder as ?host=/run/postgresql)")
        }
        database = try Self.decode(path, "the database name")
        options = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw PostgresURLError.bad("the option '\(pair)' has no value (NAME=VALUE)")
            }
            let name = try Self.decode(pair[..<equals], "an option name")
            let value = try Self.decode(pair[pair.index(after: equals)...], "the option \(name)")
            guard options[name] == nil else {
                throw PostgresURLError.bad("the option '\(name)' is given twice")
            }
            options[name] = value
        }
    }

    /// Percent-decodes `part`; `what` names it in the error (never its value, which may be a password).
    private static func decode(_ part: Substring, _ what: String) throws(PostgresURLError) -> String {
        guard part.contains("%") else { return String(part) }
        var bytes: [UInt8] = []
        var index = part.utf8.startIndex
        let utf8 = part.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                    let high = hexValue(utf8[first]), let low = hexValue(utf8[utf8.index(after: first)])
                else {
                    throw PostgresURLError.bad("\(what) has a % that is not followed by two hex digits")
                }
                bytes.append(high << 4 | low)
                index = utf8.index(index, offsetBy: 3)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw PostgresURLError.bad("\(what) is not UTF-8 once percent-decoded")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}
