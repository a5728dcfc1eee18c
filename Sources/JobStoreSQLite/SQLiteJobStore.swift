import Foundation
internal import GRDB
internal import GRDBSQLite
import JobStore
import JobValues

#if canImport(Glibc)
import Glibc
#endif

/// The ``JobStore`` over SQLite (through GRDB and the system libsqlite3),
/// in WAL mode, shared safely by several processes.
///
/// ```swift
/// let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: "/var/lib/jobd/jobd.sqlite"))
/// let id = try await store.submit(NewJob(definition: "report", stages: [StagePlan(name: "fetch", kind: "then")])).id
/// ```
///
/// Every write goes through one group-commit writer (see `GroupCommitWriter`)
/// in `BEGIN IMMEDIATE` transactions with a busy timeout, so a writer in
/// another process makes this one wait, never fail, up to the timeout.
/// Reads use a pool of read connections and never wait for writers (or,
/// with `connections: .single`, the one connection that writes).
public final class SQLiteJobStore: JobStore {
    public let configuration: SQLiteJobStoreConfiguration
    /// A `DatabasePool`, or a `DatabaseQueue` for ``SQLiteJobStoreConfiguration/Connections/single``.
    let pool: any DatabaseWriter
    let writer: GroupCommitWriter
    let checkpointer: BackgroundCheckpointer?
    /// The database file and its `-wal` as they were when opened.
    let files: FileIdentity.Watch
    /// What this process's writes wake (see ``wakeUps()``).
    let localWakeUps = LocalWakeUps()

    var path: String { configuration.path }
    var cap: Int { configuration.maxValueBytes }

    /// Opens (creating if needed) the database, and brings its schema up to date.
    public convenience init(_ configuration: SQLiteJobStoreConfiguration) throws {
        try self.init(configuration, migrations: Schema.migrations)
    }

    /// Opens the database at `path` with the default configuration.
    public convenience init(path: String) throws {
        try self.init(SQLiteJobStoreConfiguration(path: path))
    }

    init(_ configuration: SQLiteJobStoreConfiguration, migrations: [Migration]) throws {
        let limit = SQLiteJobStoreConfiguration.maxValueBytesLimit
        guard configuration.maxValueBytes > 0, configuration.maxValueBytes <= limit else {
            throw JobStoreError(
                .invalidArgument, "maxValueBytes must be between 1 and \(limit), not \(configuration.maxValueBytes)")
        }
        self.configuration = configuration
        let path = configuration.path
        if !configuration.createIfMissing, access(path, F_OK) != 0, errno == ENOENT {
            throw JobStoreError(
                .databaseMissing,
                "the job database \(path) does not exist: jobd creates it when it first starts. Start jobd, "
                    + "or check 'database' in jobd.yaml")
        }
        try JobStoreError.checkWritable(path: path)
        if configuration.createIfMissing { try Self.createPrivately(path) }
        var grdb = Configuration()
        grdb.label = "jobstore"
        grdb.busyMode = .timeout(configuration.busyTimeout.timeInterval)
        grdb.maximumReaderCount = max(1, configuration.maxReaders)
        grdb.foreignKeysEnabled = true
        grdb.prepareDatabase { db in
            // Per connection. A bigger page cache keeps the hot pages of a
            // large table (indexes, recent jobs) in memory: by default 64 MiB
            // for the writer, 16 MiB for each reader (they fill only as they
            // are used).
            let cacheKiB = max(
                64, db.configuration.readonly ? configuration.readerCacheKiB : configuration.writerCacheKiB)
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            // The BackgroundCheckpointer copies the WAL back; a connection
            // checkpoints by itself only past ~40 MB of WAL (instead of
            // SQLite's ~4 MB), as a safety net. The WAL file is cut back to
            // 64 MB after a checkpoint if it grew past that.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 10000")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            // Debian builds SQLite with SECURE_DELETE, which zeroes every
            // byte an update or delete frees: CPU and I/O on every write, to
            // hide pruned job output from someone reading the raw file —
            // who could read the live jobs anyway.
            try db.execute(sql: "PRAGMA secure_delete = OFF")
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        // Opening a new database while other processes switch it to WAL or
        // migrate it can fail with SQLITE_BUSY without SQLite's busy handler
        // ever being called: retry such opens for up to the busy timeout.
        let deadline = ContinuousClock.now + configuration.busyTimeout
        var opened: (any DatabaseWriter)?
        while opened == nil {
            do {
                let candidate: any DatabaseWriter =
                    switch configuration.connections {
                    case .pool: try DatabasePool(path: path, configuration: grdb)
                    case .single: try DatabaseQueue(path: path, configuration: grdb)
                    }
                try candidate.writeWithoutTransaction { db in
                    if configuration.connections == .single {
                        // A pool sets WAL mode itself. Persistent, and a read when already set.
                        try db.execute(sql: "PRAGMA journal_mode = WAL")
                    }
                    // Per connection; only the writer connection commits.
                    let synchronous = configuration.synchronous == .full ? "FULL" : "NORMAL"
                    try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
                    if configuration.checkIntegrity {
                        try Self.quickCheck(db, path: path)
                        // The check read every page of the file through
                        // this connection's cache; the engine's writes
                        // need few of them.
                        db.releaseMemory()
                    }
                    try Schema.migrate(db, path: path, migrations: migrations)
                }
                opened = candidate
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
            {
                Thread.sleep(forTimeInterval: 0.02)
            } catch {
                throw JobStoreError.wrap(error, path: path, doing: "open the job database")
            }
        }
        pool = opened.unsafelyUnwrapped
        files = FileIdentity.Watch(path: path)
        writer = GroupCommitWriter(
            pool: pool, path: path, maxPerTransaction: configuration.maxWritesPerTransaction,
            deferral: configuration.deferredWriteWait, onCommit: configuration.onCommit)
        do {
            checkpointer = try configuration.checkpointInterval.map {
                try BackgroundCheckpointer(path: path, every: $0, busyTimeout: configuration.busyTimeout)
            }
        } catch {
            throw JobStoreError.wrap(error, path: path, doing: "open the job database for checkpoints")
        }
    }

    /// Waits for every write made before this call to be committed (or to fail).
    public func flush() async {
        writer.releaseHeld()
        _ = try? await write(atomic: false) { _ in () }
    }

    /// Writes what is queued, refuses new writes, and closes the database.
    public func close() async throws {
        await flush()
        writer.close()
        checkpointer?.stop()
        await flush()
        do {
            try await Self.offTheCooperativePool { [pool] in try pool.close() }
        } catch {
            throw JobStoreError.wrap(error, path: path, doing: "close the job database")
        }
        if configuration.connections == .pool { Self.closeWritableLast(path: path) }
    }

    /// Runs a blocking `body` on a thread of its own. GRDB's close waits for
    /// every reader to be given back, and an async read gives its reader
    /// back from the cooperative pool: waiting there, stores closing at once
    /// on every thread of that small pool (two on two cores) wait for
    /// themselves.
    private static func offTheCooperativePool(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "jobd.store.close"
            thread.start()
        }
    }

    /// Makes the database file, if there is none, with mode 0660 whatever the
    /// umask: readable and writable by its owner and group (the group-based
    /// model of the systemd unit: members of group `jobd` use jobctl), never
    /// by other users, who would otherwise read every job's input and result.
    /// SQLite gives `-wal` and `-shm` the mode of the database file.
    static func createPrivately(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o660)
        if fd < 0 {
            if errno == EEXIST { return }
            throw JobStoreError(
                .cannotOpen, "could not create the job database \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(fd) }
        guard fchmod(fd, 0o660) == 0 else {
            throw JobStoreError(
                .cannotOpen, "could not set the mode of the job database \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// GRDB closes a pool's writer connection before its readers, and when
    /// the last connection to a WAL database closes read-only, SQLite leaves
    /// `-wal` and `-shm` behind. A short-lived process (jobctl, run by root
    /// while jobd is stopped) would leave files of its user that jobd may not
    /// be able to open. So one writable connection is opened and closed last:
    /// if no other process has the database open, it checkpoints the WAL and
    /// removes both files; otherwise it changes nothing.
    static func closeWritableLast(path: String) {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { return }
        // The WAL is opened with the first read; closing then checkpoints it.
        sqlite3_exec(handle, "SELECT count(*) FROM sqlite_schema WHERE 0", nil, nil, nil)
    }

    // MARK: Access helpers

    /// One write through the group-commit writer, awaited.
    func write<T: Sendable>(atomic: Bool, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writer.enqueue(atomic: atomic, body) { continuation.resume(with: $0) }
        }
    }

    func read<T: Sendable>(doing what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw JobStoreError.wrap(error, path: path, doing: what)
        }
    }

    /// Refuses a bad argument with an error that says what to pass instead.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw JobStoreError(.invalidArgument, message()) }
    }
}
