import JobStore
import JobValues

/// How to open a ``SQLiteJobStore``.
public struct SQLiteJobStoreConfiguration: Sendable {
    /// Whether opening creates a database that does not exist (jobd), or
    /// fails with ``JobStoreError/Code/databaseMissing`` (jobctl: a file
    /// made by a command would not be the one jobd has open).
    public var createIfMissing: Bool
    /// Whether opening runs `PRAGMA quick_check` and refuses a damaged
    /// database with ``JobStoreError/Code/corrupt`` (jobd, at start).
    public var checkIntegrity: Bool

    /// Called on the writer's thread with the duration of each committed
    /// group-commit transaction, from BEGIN to COMMIT (metrics); keep it short.
    public var onCommit: (@Sendable (Duration) -> Void)?

    /// When a commit reaches the disk.
    public enum Synchronous: String, Sendable, Hashable {
        /// WAL with `synchronous=NORMAL`: a commit survives a crash of the
        /// process; a power cut or kernel crash may lose the last commits
        /// (never corrupt the database). The default.
        case normal
        /// `synchronous=FULL`: every commit is on disk before it is
        /// acknowledged; survives a power cut; commits cost an fsync each.
        case full
    }

    /// Which connections a store opens.
    public enum Connections: String, Sendable, Hashable {
        /// A writing connection and up to ``SQLiteJobStoreConfiguration/maxReaders``
        /// read connections that never wait for it: for a daemon. The default.
        case pool
        /// One connection for reads and writes: for a short-lived command
        /// (jobctl). It opens faster and writes nothing to open a database
        /// (a pool writes a transaction to create the WAL file when there is
        /// none), and, being writable, it removes `-wal` and `-shm` when it
        /// is the last connection to close.
        case single
    }

    /// The database file. Its folder must be writable too (SQLite creates
    /// `PATH-wal` and `PATH-shm` beside it).
    public var path: String
    public var synchronous: Synchronous
    /// How long a writer waits for another process's write lock before
    /// failing with ``JobStoreError/Code/busy``.
    public var busyTimeout: Duration
    /// The largest value (job input, stage value, job result, error text) in
    /// bytes; a bigger one is refused, never cut. Default 1 MiB, at most
    /// ``maxValueBytesLimit``.
    public var maxValueBytes: Int
    /// The largest `maxValueBytes` a store accepts: ``ByteSize/storedValueLimit``.
    public static let maxValueBytesLimit = ByteSize.storedValueLimit.bytes
    /// The most writes one group-commit transaction holds.
    public var maxWritesPerTransaction: Int
    /// The longest a deferrable write (an idempotent stage's start, which
    /// nobody waits for) is held back to join another write's transaction;
    /// the stage's result, if it comes first, records the start instead.
    public var deferredWriteWait: Duration
    /// The most concurrent read connections (with ``Connections/pool``).
    public var maxReaders: Int
    public var connections: Connections
    /// How often a connection of its own copies the WAL back into the
    /// database, so the writer does not have to; `nil` leaves it all to the
    /// writer's automatic checkpoints (every ~40 MB of WAL).
    public var checkpointInterval: Duration?
    /// SQLite's page cache of each read connection, in KiB: filled as pages
    /// are read, then kept. A long-running process whose reads sweep a big
    /// table (a daemon counting 100,000 pending jobs for its status) wants
    /// it small, so its memory stays flat; a reader of many different jobs
    /// wants it big.
    public var readerCacheKiB: Int
    /// The writer's page cache, in KiB.
    public var writerCacheKiB: Int

    public init(
        path: String,
        synchronous: Synchronous = .normal,
        busyTimeout: Duration = .seconds(10),
        maxValueBytes: Int = 1 << 20,
        maxWritesPerTransaction: Int = 1024,
        deferredWriteWait: Duration = .milliseconds(50),
        maxReaders: Int = 4,
        checkpointInterval: Duration? = .milliseconds(250),
        readerCacheKiB: Int = 16_384,
        writerCacheKiB: Int = 65_536,
        connections: Connections = .pool,
        createIfMissing: Bool = true,
        checkIntegrity: Bool = false
    ) {
        self.createIfMissing = createIfMissing
        self.checkIntegrity = checkIntegrity
        self.path = path
        self.synchronous = synchronous
        self.busyTimeout = busyTimeout
        self.maxValueBytes = maxValueBytes
        self.maxWritesPerTransaction = maxWritesPerTransaction
        self.deferredWriteWait = deferredWriteWait
        self.maxReaders = maxReaders
        self.checkpointInterval = checkpointInterval
        self.readerCacheKiB = readerCacheKiB
        self.writerCacheKiB = writerCacheKiB
        self.connections = connections
    }
}
