import Foundation

/// The parts of a `postgres://` URL, percent-decoded; no meaning given yet.
struct PostgresURL {
    var user: String?
    var password: String?
    /// A host name, an IP address, or a unix socket folder (`/run/postgresql`); may be empty.
    var host: String
    var port: String?
    var database: String
    var options: [String: String]

    init(_ url: String) throws {
        let text = url.trimmingCharacters(in: .whitespaces)
        guard let schemeEnd = text.range(of: "://") else {
            throw PostgresStoreConfiguration.badURL("it does not start with postgres:// or postgresql://")
        }
        let scheme = text[..<schemeEnd.lowerBound]
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresStoreConfiguration.badURL("the scheme '\(scheme)' is not postgres or postgresql")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        if rest.contains("#") { throw PostgresStoreConfiguration.badURL("a #fragment has no meaning in it") }
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
            throw PostgresStoreConfiguration.badURL("it names several hosts; give one (a load balancer or DNS name for failover)")
        }
        var hostPart = authority
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw PostgresStoreConfiguration.badURL("the IPv6 address has no closing ]")
            }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = String(after.dropFirst()) } else if !after.isEmpty {
                throw PostgresStoreConfiguration.badURL("'\(after)' after the IPv6 address is not :PORT")
            }
        } else if authority.filter({ $0 == ":" }).count > 1 {
            throw PostgresStoreConfiguration.badURL(
                "the host looks like an IPv6 address without brackets: write it in brackets, postgres://USER@[::1]:5432/DATABASE")
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            port = String(authority[authority.index(after: colon)...])
        }
        host = try Self.decode(hostPart, "the host")
        if port?.isEmpty == true { port = nil }
        if path.contains("/") {
            throw PostgresStoreConfiguration.badURL(
                "the path '/\(path)' is not /DATABASE (give a unix socket folder as ?host=/run/postgresql)")
        }
        database = try Self.decode(path, "the database name")
        options = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw PostgresStoreConfiguration.badURL("the option '\(pair)' has no value (NAME=VALUE)")
            }
            let name = try Self.decode(pair[..<equals], "an option name")
            let value = try Self.decode(pair[pair.index(after: equals)...], "the option \(name)")
            guard options[name] == nil else {
                throw PostgresStoreConfiguration.badURL("the option '\(name)' is given twice")
            }
            options[name] = value
        }
    }

    /// Percent-decodes `part`; `what` names it in the error (never its value, which may be a password).
    private static func decode(_ part: Substring, _ what: String) throws -> String {
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
                    throw PostgresStoreConfiguration.badURL("\(what) has a % that is not followed by two hex digits")
                }
                bytes.append(high << 4 | low)
                index = utf8.index(index, offsetBy: 3)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw PostgresStoreConfiguration.badURL("\(what) is not UTF-8 once percent-decoded")
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
