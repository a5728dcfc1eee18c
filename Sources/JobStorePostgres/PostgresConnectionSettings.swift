import Foundation
import JobStore
import JobValues
import Locking
internal import Logging
internal import NIOCore
internal import PostgresNIO
import Synchronization

/// What the server is told on each pooled connection before its first use:
/// how long a statement may wait for a lock another session holds
/// (`lock_timeout`), run at all (`statement_timeout`), and how long the
/// session may sit idle inside a transaction
/// (`idle_in_transaction_session_timeout`). All are set for the session,
/// once per connection: a write held up by a row an operator locked in psql
/// fails after `lockTimeout` and is made again later, instead of holding up
/// every write of the host behind it; and a session whose client froze or
/// died between two statements of a transaction is ended by the server,
/// which lets go of the rows it locked.
final class PostgresConnectionSettings: Sendable {
    let lockTimeout: Duration
    let statementTimeout: Duration
    let idleInTransactionTimeout: Duration
    private let logger: Logger
    /// The pool's connections already set up, by id; one leaves when it closes.
    private let prepared = Mutex<Set<PostgresConnection.ID>>([])

    init(lockTimeout: Duration, statementTimeout: Duration, idleInTransactionTimeout: Duration, logger: Logger) {
        self.lockTimeout = lockTimeout
        self.statementTimeout = statementTimeout
        self.idleInTransactionTimeout = idleInTransactionTimeout
        self.logger = logger
    }

    /// Sets `connection` up unless it already is.
    func prepare(_ connection: PostgresConnection, clock: StatementClock?) async throws {
        let id = connection.id
        guard !prepared.withAnnouncedLock({ $0.contains(id) }) else { return }
        var session = PostgresSession(connection: connection, schema: "", logger: logger)
        session.clock = clock
        try await session.execute(
            """
            SELECT set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false),
                   set_config('idle_in_transaction_session_timeout', $3, false)
            """,
            "\(lockTimeout.milliseconds)ms", "\(statementTimeout.milliseconds)ms",
            "\(max(1, idleInTransactionTimeout.milliseconds))ms")
        prepared.withAnnouncedLock { _ = $0.insert(id) }
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.prepared.withAnnouncedLock { _ = $0.remove(id) }
        }
    }
}

/// The database a store works on, for messages: never its password.
package struct PostgresTarget: Sendable, CustomStringConvertible {
    let user: String
    let database: String
    let schema: String
    /// The server: `db.example.com:5432`, `[::1]:5432` or a unix socket's path.
    let place: String
    /// `PostgreSQL database jobs at db.example.com:5432 (user jobd, schema jobd)`.
    package let description: String

    package init(_ configuration: PostgresJobStoreConfiguration) {
        user = configuration.user
        database = configuration.database
        schema = configuration.schema
        place =
            switch configuration.endpoint {
            case let .tcp(host, port): "\(host.contains(":") ? "[\(host)]" : host):\(port)"
            case let .unixSocket(path): path
            }
        description = "PostgreSQL database \(database) at \(place) (user \(user), schema \(schema))"
    }

    /// `name` as an SQL identifier: as it is when it needs no quotes, else in double quotes.
    static func identifier(_ name: String) -> String {
        let plain =
            name.first.map { $0 == "_" || ("a"..."z").contains($0) } == true
            && name.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
        return plain ? name : "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
