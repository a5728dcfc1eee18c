import Foundation
import JobValues

/// The dashboard's users: `NAME:ROLE:HASH` lines, HASH a password's
/// (``PasswordHash``) or a script's token's (``APIToken``); `#` starts a
/// comment line. Read once, when the listener starts.
public struct UserTable: Sendable {
    struct User: Sendable {
        var role: DashboardRole
        var hash: String
    }

    private let users: [String: User]
    /// The users with a token, by the token's hash.
    private let tokens: [String: (name: String, role: DashboardRole)]

    /// The users of `source`; a file that cannot be read, or a line that is
    /// not well formed, is an error that names the file and line (never the hash).
    public init(_ source: HTTPAccessConfiguration.UserSource, environment: [String: String]) throws(UserTableError) {
        let path: String
        switch source {
        case .file(let file):
            path = file
        case .credential(let name):
            guard let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty else {
                throw UserTableError(
                    "http: the users credential '\(name)' needs $CREDENTIALS_DIRECTORY: run jobd under systemd with "
                        + "LoadCredential=\(name):PATH, or give 'users: PATH' instead")
            }
            path = folder + "/" + name
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UserTableError(
                "http: cannot read the users file \(path); check 'users' of 'http' and its permissions")
        }
        try self.init(text: String(decoding: data, as: UTF8.self), path: path)
    }

    init(text: String, path: String) throws(UserTableError) {
        var users: [String: User] = [:]
        var tokens: [String: (name: String, role: DashboardRole)] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let where_ = "\(path):\(index + 1)"
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty else {
                throw UserTableError("http: \(where_): a user line reads NAME:ROLE:HASH")
            }
            guard let role = DashboardRole(rawValue: parts[1]) else {
                throw UserTableError("http: \(where_): the role is read or operate")
            }
            let isToken = APIToken.isTokenHash(parts[2])
            if let problem = isToken ? APIToken.problem(with: parts[2]) : PasswordHash.problem(with: parts[2]) {
                throw UserTableError("http: \(where_): \(problem)")
            }
            guard users[parts[0]] == nil else {
                throw UserTableError("http: \(where_): user \(parts[0]) appears twice")
            }
            guard !isToken || tokens[parts[2]] == nil else {
                throw UserTableError("http: \(where_): this token hash is another user's too")
            }
            users[parts[0]] = User(role: role, hash: parts[2])
            if isToken { tokens[parts[2]] = (parts[0], role) }
        }
        self.users = users
        self.tokens = tokens
    }

    public init() {
        users = [:]
        tokens = [:]
    }

    public var isEmpty: Bool { users.isEmpty }

    /// The role of `name` if `password` is theirs.
    func check(_ name: String, password: String) -> DashboardRole? {
        guard let user = users[name], !APIToken.isTokenHash(user.hash) else {
            // As long as a real check: whether a name exists is not told by the time a refusal takes.
            _ = PasswordHash.verify(password, against: UserTable.decoy)
            return nil
        }
        return PasswordHash.verify(password, against: user.hash) ? user.role : nil
    }

    /// The user whose token `token` is. Looked up by the token's hash: what
    /// the lookup's time could tell is about the hash, not the token.
    func tokenUser(_ token: String) -> (name: String, role: DashboardRole)? {
        tokens[APIToken.hash(token)]
    }

    /// The role the file gives `name`, whatever the password (a user a trusted proxy vouched for).
    func role(of name: String) -> DashboardRole? {
        users[name]?.role
    }

    private static let decoy =
        "pbkdf2-sha256$\(PasswordHash.defaultRounds)$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
}

/// The users file could not be used; the message says where and why.
public struct UserTableError: Error, Sendable, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
