/// How to open a ``SQLiteJobStore``.
public struct JobStoreConfiguration: Sendable, Hashable {
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
        /// A writing connection and up to ``JobStoreConfiguration/maxReaders``
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
    /// bytes; a bigger one is refused, never cut. Default 1 MiB.
    public var maxValueBytes: Int
    /// The most writes one group-commit transaction holds.
    public var maxWritesPerTransaction: Int
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
        maxReaders: Int = 4,
        checkpointInterval: Duration? = .milliseconds(250),
        readerCacheKiB: Int = 16_384,
        writerCacheKiB: Int = 65_536,
        connections: Connections = .pool
    ) {
        self.path = path
        self.synchronous = synchronous
        self.busyTimeout = busyTimeout
        self.maxValueBytes = maxValueBytes
        self.maxWritesPerTransaction = maxWritesPerTransaction
        self.maxReaders = maxReaders
        self.checkpointInterval = checkpointInterval
        self.readerCacheKiB = readerCacheKiB
        self.writerCacheKiB = writerCacheKiB
        self.connections = connections
    }
}
