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
    /// The most concurrent read connections.
    public var maxReaders: Int
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
        writerCacheKiB: Int = 65_536
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
    }
}
