import Foundation
import JobStore
import JobValues
package import Logging
internal import NIOCore
internal import NIOSSL
package import PostgresNIO
import ServiceLifecycle

/// The ``JobStore`` over PostgreSQL (postgres-nio), for several jobd hosts
/// sharing one queue: claims with `FOR UPDATE SKIP LOCKED`, leases any host
/// may rescue, wake-ups by `LISTEN`/`NOTIFY`, a leader lease for chores.
///
/// ```swift
/// let store = try await PostgresJobStore(PostgresJobStoreConfiguration(url: "postgres://jobd@db/jobs"))
/// // The daemon: a Service of its group (listed first, so it stops last).
/// ServiceGroup(services: [store, engine, …], gracefulShutdownSignals: [.sigterm], logger: logger)
/// // A short command: runs it around the body.
/// try await PostgresJobStore.withStore(configuration) { store in try await store.job(7) }
/// ```
///
/// Opening connects once on a connection of its own — so that a wrong
/// password, a missing database or missing privileges fail here, with one
/// clear line — and creates or upgrades the schema (unless
/// `createsSchema` is off: then it must exist, at this version). Every
/// later call needs ``run()`` to be running: it drives the connection pool
/// and the LISTEN connection. Calls wait up to `operationTimeout` for a
/// connection, then fail with ``JobStoreError/Code/unavailable``
/// (retryable); the pool reconnects with a backoff by itself. A statement
/// held up by another session's lock fails after `lockTimeout` with
/// ``JobStoreError/Code/busy`` (retryable); one left unanswered past
/// `statementTimeout` and a margin gives its connection up (closed,
/// `unavailable`).
public final class PostgresJobStore: JobStore, Service {
    public let configuration: PostgresJobStoreConfiguration
    let client: PostgresClient
    let writer: PostgresWriter
    let listener: PostgresWakeUpListener
    let settings: PostgresConnectionSettings
    let logger: Logger
    /// The database, without the password, for messages.
    let target: PostgresTarget

    var schema: String { configuration.schema }
    var cap: Int { configuration.maxValueBytes }

    /// Opens the database: connects, then creates or upgrades the schema.
    public convenience init(_ configuration: PostgresJobStoreConfiguration) async throws {
        try await self.init(configuration, logger: Self.silent)
    }

    static let silent = Logger(label: "jobd.store", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The same, logging the pool's and the LISTEN connection's troubles to `logger`'s label.
    public convenience init(_ configuration: PostgresJobStoreConfiguration, logLabel: String) async throws {
        try await self.init(configuration, logger: Logger(label: logLabel))
    }

    init(
        _ configuration: PostgresJobStoreConfiguration, logger: Logger = silent,
        migrations: [(version: Int, name: String, sql: String)] = PostgresSchema.migrations
    ) async throws {
        try PostgresJobStoreConfiguration.checkSchemaName(configuration.schema)
        guard configuration.maxValueBytes > 0, configuration.maxConnections > 0 else {
            throw JobStoreError(.invalidArgument, "maxValueBytes and maxConnections must be positive")
        }
        self.configuration = configuration
        self.logger = logger
        let target = PostgresTarget(configuration)
        self.target = target
        let connector = try PostgresConnector(configuration, logger: logger)
        let connection = try await connector.connect(target: target, doing: "open the job database")
        do {
            let migrator = PostgresMigrator(schema: configuration.schema, target: target, logger: logger)
            if configuration.createsSchema {
                try await migrator.migrate(connection, migrations: migrations)
            } else {
                try await migrator.requireCurrent(connection, latest: migrations.last?.version ?? 0)
            }
            try await connection.close()
        } catch {
            try? await connection.close()
            throw JobStoreError.wrapPostgres(error, target: target, doing: "open the job database", creating: true)
        }
        client = PostgresClient(configuration: connector.poolConfiguration, backgroundLogger: logger)
        let settings = PostgresConnectionSettings(
            lockTimeout: configuration.lockTimeout, statementTimeout: configuration.statementTimeout,
            idleInTransactionTimeout: configuration.idleInTransactionTimeout, logger: logger)
        self.settings = settings
        writer = PostgresWriter(
            client: client, settings: settings, schema: configuration.schema, target: target,
            timeout: configuration.operationTimeout, silence: configuration.silenceBound,
            maxPerTransaction: configuration.maxWritesPerTransaction, logger: logger)
        listener = PostgresWakeUpListener(
            channel: PostgresWakeUps.channel(schema: configuration.schema), silence: configuration.silenceBound,
            logger: logger)
        self.connector = connector
    }

    let connector: PostgresConnector

    static func describe(_ configuration: PostgresJobStoreConfiguration) -> String {
        PostgresTarget(configuration).description
    }

    /// Drives the connection pool and the LISTEN connection until the task
    /// is cancelled or, in a `ServiceGroup`, a graceful shutdown begins.
    /// Writes still queued then fail with ``JobStoreError/Code/closed``.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            group.addTask {
                await cancelWhenGracefulShutdown {
                    await self.listener.run { [connector = self.connector, target = self.target] in
                        try await connector.connect(target: target, doing: "listen for wake-ups")
                    }
                }
            }
        }
        writer.close()
    }

    /// Opens a store, runs it around `body`, then closes it: for a short-lived command.
    public static func withStore<T: Sendable>(
        _ configuration: PostgresJobStoreConfiguration, _ body: (PostgresJobStore) async throws -> T
    ) async throws -> T {
        try await PostgresJobStore(configuration).running(body)
    }

    /// Runs ``run()`` around `body`, then closes the store, whether `body`
    /// threw or not: for a short-lived command.
    public func running<T: Sendable>(_ body: (PostgresJobStore) async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            do {
                let result = try await body(self)
                await close()
                return result
            } catch {
                await close()
                throw error
            }
        }
    }

    /// Waits for every write made before this call to be committed (or to fail).
    public func flush() async {
        await writer.flush()
    }

    /// Writes what is queued and refuses new writes. The pool stops when ``run()`` ends.
    public func close() async {
        await writer.flush()
        writer.close()
    }

    public func wakeUps() -> AsyncStream<StoreWakeUp> {
        listener.stream()
    }

    // MARK: Access helpers

    @discardableResult
    func write<T: Sendable>(
        atomic: Bool, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        try await writer.write(atomic: atomic, body)
    }

    /// Runs `body` on a pooled connection of its own, outside the writer's
    /// queue (autocommit: each statement its own transaction): reads, and
    /// the single-statement writes that must not wait behind others (lease
    /// renewals, the leader lease). `silence`: how long one of its
    /// statements may stay unanswered before the connection is given up on
    /// (default: `statementTimeout` and a margin).
    func read<T: Sendable>(
        doing what: String, silence: Duration? = nil, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        let (client, schema, logger, target, settings) = (
            self.client, self.schema, self.logger, self.target, self.settings
        )
        let bound = silence ?? configuration.silenceBound
        do {
            let timeout = configuration.operationTimeout
            return try await client.withWatchedConnection(
                waitingAtMost: timeout, silence: bound, settings: settings,
                noConnection: { JobStoreError.unavailable(target, what, "no connection within \(timeout)") },
                lost: { JobStoreError.unavailable(target, what, "the connection closed with the query unanswered") },
                silent: { JobStoreError.silent(target, what, bound) }
            ) { connection, clock in
                var session = PostgresSession(connection: connection, schema: schema, logger: logger)
                session.clock = clock
                return try await body(session)
            }
        } catch {
            throw JobStoreError.wrapPostgres(error, target: target, doing: what)
        }
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw JobStoreError(.invalidArgument, message()) }
    }
}

/// Connections to the configured server: one at a time (opening, LISTEN)
/// and the pool's configuration.
package struct PostgresConnector: Sendable {
    let connection: PostgresConnection.Configuration
    let poolConfiguration: PostgresClient.Configuration
    let logger: Logger

    package init(_ configuration: PostgresJobStoreConfiguration, logger: Logger) throws {
        self.logger = logger
        var tls = TLSConfiguration.makeClientConfiguration()
        if configuration.sslMode != .verifyFull { tls.certificateVerification = .none }
        if let file = configuration.rootCertificates { tls.trustRoots = .file(file) }
        let password = configuration.password
        var single: PostgresConnection.Configuration
        var pool: PostgresClient.Configuration
        switch configuration.endpoint {
        case let .tcp(host, port):
            let context: NIOSSLContext
            do { context = try NIOSSLContext(configuration: tls) } catch {
                throw JobStoreError(
                    .cannotOpen,
                    "cannot set up TLS for \(PostgresTarget(configuration)): \(error)"
                        + (configuration.rootCertificates.map {
                            " (is sslrootcert=\($0) a readable file of PEM certificates?)"
                        } ?? ""),
                    underlying: error)
            }
            let (singleTLS, poolTLS): (PostgresConnection.Configuration.TLS, PostgresClient.Configuration.TLS) =
                switch configuration.sslMode {
                case .disable: (.disable, .disable)
                case .prefer: (.prefer(context), .prefer(tls))
                case .require, .verifyFull: (.require(context), .require(tls))
                }
            single = .init(
                host: host, port: port, username: configuration.user, password: password,
                database: configuration.database, tls: singleTLS)
            pool = .init(
                host: host, port: port, username: configuration.user, password: password,
                database: configuration.database, tls: poolTLS)
        case let .unixSocket(path):
            single = .init(
                unixSocketPath: path, username: configuration.user, password: password, database: configuration.database
            )
            pool = .init(
                unixSocketPath: path, username: configuration.user, password: password, database: configuration.database
            )
        }
        let startup = [("application_name", configuration.applicationName)]
        single.options.connectTimeout = .milliseconds(configuration.connectTimeout.milliseconds)
        single.options.additionalStartupParameters = startup
        pool.options.connectTimeout = configuration.connectTimeout
        pool.options.additionalStartupParameters = startup
        pool.options.maximumConnections = configuration.maxConnections
        // No pool keep-alive query: one sent on a connection gone silent
        // would wait for ever, holding that connection from the pool. Idle
        // connections are closed after a minute instead, and every call's
        // statements are watched (`withWatchedConnection`).
        pool.options.keepAliveBehavior = nil
        connection = single
        poolConfiguration = pool
    }

    package func connect(target: PostgresTarget, doing what: String) async throws -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(configuration: connection, id: 0, logger: logger)
        } catch {
            throw JobStoreError.wrapPostgres(error, target: target, doing: what)
        }
    }
}
