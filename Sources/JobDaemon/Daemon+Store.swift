import Foundation
import JobConfig
import JobDatabase
import JobMetrics
import JobStore
import JobStorePostgres
import JobStoreSQLite
import JobValues

#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    /// Opens (creating or upgrading) the database of `config`. PostgreSQL is
    /// checked first (login, encoding, schema version, privileges: what
    /// `jobd --check` checks), so that a jobd that could not work stops at
    /// its start with one line.
    static func openStore(_ config: DaemonConfiguration, metrics: JobMetrics) async throws -> OpenedStore {
        try await JobDatabase.open(
            config.databaseLocation, maxValueBytes: config.store.valueCap.bytes, applicationName: "jobd \(config.node)",
            sqlite: { configuration in
                try makeFolder(of: configuration.path)
                configuration.synchronous = config.store.durability == .full ? .full : .normal
                // jobd's readers count the queue for STATUS (a sweep of the
                // `jobs_state` index) and read little else: small caches keep its
                // memory flat however long the queue.
                configuration.readerCacheKiB = 1024
                configuration.checkIntegrity = true
                configuration.onCommit = { metrics.storeCommitted(duration: $0) }
            },
            postgres: { configuration in
                configuration.lockTimeout = lockTimeout(lease: config.lease)
                configuration.idleInTransactionTimeout = idleInTransactionTimeout(lease: config.lease)
                _ = try await PostgresJobStore.check(configuration, doing: "open the job database")
            })
    }

    /// How long one of jobd's statements waits for a row lock another
    /// session holds (a psql session left in a transaction) before it fails
    /// and is made again later: short, since jobd's writes go one
    /// transaction at a time, and a quarter of the lease at most.
    static func lockTimeout(lease: Duration) -> Duration {
        min(.seconds(2), lease / 4)
    }

    /// How long the server lets one of jobd's sessions sit idle inside a
    /// transaction before it ends the session: a third of the lease, 5 s at
    /// most. jobd never waits for anything but the server inside a
    /// transaction, so only a host that froze or died between two
    /// statements reaches it; the server then rolls back and lets go of the
    /// rows it locked (its jobs' rows, a schedule's mark) well before its
    /// leases expire, so that the other hosts take its jobs over and fire
    /// their schedules as if it had died outside a transaction.
    static func idleInTransactionTimeout(lease: Duration) -> Duration {
        min(.seconds(5), lease / 3)
    }

    /// `jobd --check` of a PostgreSQL database (a SQLite file is not
    /// touched: jobd creates it): connected to and checked, nothing changed.
    /// Gives the line to print and the exit status.
    static func checkDatabase(_ config: DaemonConfiguration, url: String) async -> (line: String, status: Int32) {
        do {
            let configuration = try JobDatabase.postgresConfiguration(
                url: url, maxValueBytes: config.store.valueCap.bytes, applicationName: "jobd --check")
            let report = try await PostgresJobStore.check(configuration)
            var line = "ok: database \(configuration): \(report)"
            if report.clockSkewIsReported {
                line +=
                    "\nwarning: this host's wall clock is \(report.clockText) the database server's: jobd goes by the "
                    + "server's clock (leases, job timeouts, schedules, delays), but fix this host's time (timedatectl status; chronyc tracking)"
            }
            return (line, JobdExit.ok)
        } catch {
            return (
                "error: database \(config.databaseDescription): \(Self.message(error))",
                exitStatus(forStoreError: error)
            )
        }
    }

    /// jobd's exit status for a database that cannot be opened.
    static func exitStatus(forStoreError error: any Error) -> Int32 {
        switch (error as? JobStoreError)?.code {
        case .permissionDenied?: JobdExit.noPermission
        case .unavailable?: JobdExit.tempFail
        case .invalidArgument?: JobdExit.config
        default: JobdExit.cantCreate
        }
    }

    /// A store error's one line, without its code in brackets.
    static func message(_ error: any Error) -> String {
        (error as? JobStoreError)?.message ?? "\(error)"
    }

    /// Makes the folder of a SQLite database file that jobd is to create,
    /// if missing: owner and group only, whatever the umask (the unit's
    /// model: group jobd).
    private static func makeFolder(of path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        guard !FileManager.default.fileExists(atPath: folder) else { return }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard chmod(folder, 0o770) == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: folder])
        }
    }
}
