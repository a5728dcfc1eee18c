import Foundation

/// Where the HTTP listener listens: `http: { listen: … }` in jobd.yaml.
///
/// - `127.0.0.1:9464`, `0.0.0.0:9464`: an IPv4 address and a port;
/// - `[::1]:9464`, `[::]:9464`: an IPv6 address in brackets and a port;
/// - `localhost:9464`: the IPv4 loopback, 127.0.0.1 (no name is looked up);
/// - `unix:/run/jobd/http.sock`: a unix socket, mode 0660.
///
/// Other host names are refused: binding to one would need DNS at startup
/// and may listen somewhere unexpected.
public enum HTTPListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IP address literal (IPv6 without brackets) and a port; port 0
    /// picks a free one (tests).
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// The longest unix socket path the listener takes: SwiftNIO's limit,
    /// portable to every system it runs on (Linux's `sun_path` would hold 107).
    public static let maxUnixPathBytes = 103

    /// Parses `text`; a relative unix socket path is resolved against
    /// `folder` (the config file's) when one is given.
    public static func parse(
        _ text: String, relativeTo folder: String? = nil
    ) throws(HTTPListenAddressError) -> HTTPListenAddress {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw HTTPListenAddressError(
                .empty, text, "is empty; give 127.0.0.1:9464, [::1]:9464 or unix:/run/jobd/http.sock")
        }
        if let scheme = trimmed.range(of: "://") {
            let rest = trimmed[scheme.upperBound...].split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
            throw HTTPListenAddressError(
                .badHost, text, "is a URL; give the address alone: \(rest.isEmpty ? "127.0.0.1:9464" : rest)")
        }
        if trimmed.hasPrefix("unix:") {
            return try parseUnix(String(trimmed.dropFirst(5)), text: text, folder: folder)
        }
        let host: String
        let portText: String
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw HTTPListenAddressError(.badHost, text, "has no ']' after the IPv6 address; write [::1]:9464")
            }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw HTTPListenAddressError(.missingPort, text, "has no port; write [\(host)]:9464")
            }
            portText = String(rest.dropFirst())
            guard IPLiteral.isIPv6(host) else {
                throw HTTPListenAddressError(.badHost, text, "'\(host)' is not an IPv6 address; write [::1]:9464")
            }
        } else {
            let colons = trimmed.filter { $0 == ":" }.count
            if colons > 1 {
                throw HTTPListenAddressError(
                    .badHost, text, "looks like an IPv6 address without brackets; write [::1]:9464")
            }
            guard let colon = trimmed.lastIndex(of: ":") else {
                throw HTTPListenAddressError(.missingPort, text, "has no port; write \(trimmed):9464")
            }
            host = String(trimmed[..<colon])
            portText = String(trimmed[trimmed.index(after: colon)...])
            guard host == "localhost" || IPLiteral.isIPv4(host) else {
                throw HTTPListenAddressError(
                    .badHost, text,
                    "'\(host)' is not an IP address; give an address (127.0.0.1, 0.0.0.0, [::1], [::]) or localhost")
            }
        }
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText), (1...65_535).contains(port)
        else {
            throw HTTPListenAddressError(.badPort, text, "'\(portText)' is not a port: give a number within 1…65535")
        }
        return .tcp(host: host == "localhost" ? "127.0.0.1" : host, port: port)
    }

    private static func parseUnix(
        _ path: String, text: String, folder: String?
    ) throws(HTTPListenAddressError) -> HTTPListenAddress {
        guard !path.isEmpty else {
            throw HTTPListenAddressError(.badPath, text, "names no path; write unix:/run/jobd/http.sock")
        }
        guard !path.contains("\0") else {
            throw HTTPListenAddressError(.badPath, text, "has a NUL byte in its path")
        }
        var full = path
        if !path.hasPrefix("/"), let folder {
            full = URL(fileURLWithPath: folder).appendingPathComponent(path).standardizedFileURL.path
        }
        // A trailing slash (before the path was resolved), ".", "..", or a folder that exists.
        var isFolder: ObjCBool = false
        if path.hasSuffix("/") || full.hasSuffix("/")
            || (FileManager.default.fileExists(atPath: full, isDirectory: &isFolder) && isFolder.boolValue)
        {
            let folderPath = full.hasSuffix("/") ? full : full + "/"
            throw HTTPListenAddressError(
                .badPath, text, "names a folder; name the socket file: unix:\(folderPath)http.sock")
        }
        guard full.utf8.count <= maxUnixPathBytes else {
            throw HTTPListenAddressError(
                .badPath, text,
                "has a path of \(full.utf8.count) bytes; a unix socket path has at most \(maxUnixPathBytes): use a shorter one"
            )
        }
        return .unix(path: full)
    }

    /// As written in jobd.yaml: `127.0.0.1:9464`, `[::1]:9464`, `unix:/path`.
    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}

/// Why a listen address was refused; ``message`` says what to write instead.
/// The config loader prefixes it with the file and line.
public struct HTTPListenAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code, for tests and scripts.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String { case empty, badHost, missingPort, badPort, badPath }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        public static let empty = Code(.empty)
        public static let badHost = Code(.badHost)
        public static let missingPort = Code(.missingPort)
        public static let badPort = Code(.badPort)
        public static let badPath = Code(.badPath)

        public var description: String { value.rawValue }
    }

    public let code: Code
    /// `http.listen 'TEXT' …: what to do`.
    public let message: String

    init(_ code: Code, _ text: String, _ problem: String) {
        self.code = code
        self.message = "http.listen '\(text)' \(problem)"
    }

    public var description: String { message }
}

/// IP address literals, checked by the C library's own parser.
enum IPLiteral {
    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}
