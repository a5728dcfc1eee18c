import Foundation
import JobValues

/// `database:` and `node:` of jobd.yaml: SQLite or PostgreSQL, and the name
/// this host goes by in leases, logs and jobctl's output.
extension DaemonConfiguration {
    /// `database` as a SQLite file or a PostgreSQL URL: what a store is opened from.
    public var databaseLocation: DatabaseLocation { DatabaseLocation(database) }

    /// `database` as it may be logged or printed: a SQLite path as it is, a
    /// URL without its password.
    public var databaseDescription: String { databaseLocation.description }

    /// This host's name when jobd.yaml gives no `node:`: the host name, with
    /// anything but letters, digits, `.`, `-` and `_` made `-`.
    public static func defaultNode(hostName: String = ProcessInfo.processInfo.hostName) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                hostName.unicodeScalars.prefix(nodeMaxLength).map {
                    nodeCharacters.contains($0) ? $0 : "-"
                }))
        return cleaned.isEmpty ? "localhost" : cleaned
    }

    public static let nodeMaxLength = 63
    static let nodeCharacters = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")

    /// Why `node` is not a usable node name, or nil.
    static func nodeProblem(_ node: String) -> String? {
        if node.unicodeScalars.count > nodeMaxLength {
            return "'node' is \(node.unicodeScalars.count) characters long; at most \(nodeMaxLength) are allowed"
        }
        if !node.unicodeScalars.allSatisfy(nodeCharacters.contains) {
            return "'node' '\(NodeReader.excerpt(node))' may hold only letters, digits, '.', '-' and '_' (it names "
                + "this host in leases: web-1, worker-2.example.com)"
        }
        return nil
    }

    /// Why `url` (a `database:` that looks like a PostgreSQL URL) cannot be
    /// used, or nil. Checks the form only: no password is looked up, nothing
    /// is connected to.
    static func databaseURLProblem(_ url: String) -> String? {
        do {
            _ = try PostgresURL(url)
            return nil
        } catch {
            return "'database': \(error.message)"
        }
    }
}
