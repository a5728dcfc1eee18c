/// Where the job database is, as `database:` of jobd.yaml says: a SQLite
/// file (one host) or a PostgreSQL URL (several hosts sharing one queue).
///
/// jobd, jobctl and the tests open a store from one of these through one
/// function (`JobDatabase.open` in the `JobDatabase` module).
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite database file (absolute once jobd.yaml is loaded).
    case sqlite(path: String)
    /// A `postgres://` or `postgresql://` URL, as written; it may hold a password.
    case postgres(url: String)

    /// `database` as jobd.yaml gives it: a PostgreSQL URL
    /// (``PostgresURL/isURL(_:)``), else a SQLite path.
    public init(_ database: String) {
        self = PostgresURL.isURL(database) ? .postgres(url: database) : .sqlite(path: database)
    }

    /// The SQLite file, or nil for a PostgreSQL database.
    public var sqlitePath: String? {
        if case let .sqlite(path) = self { return path }
        return nil
    }

    /// Whether several hosts may share this database's queue (PostgreSQL):
    /// their jobds hear of each other's writes from the database itself,
    /// and each job's host is worth showing.
    public var isShared: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// As it may be logged or printed: a SQLite path as it is, a URL
    /// without its password.
    public var description: String {
        switch self {
        case let .sqlite(path): path
        case let .postgres(url): (try? PostgresURL(url))?.description ?? "a PostgreSQL URL (malformed)"
        }
    }
}
