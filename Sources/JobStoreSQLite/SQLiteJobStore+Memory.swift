internal import GRDB
internal import GRDBSQLite
import JobStore

extension SQLiteJobStore: ReleasesIdleMemory {
    /// Read connections are closed once free (the next read opens one with
    /// an empty cache); the writing connection drops its cached pages and
    /// statements between two transactions.
    public func releaseIdleMemory() {
        switch pool {
        case let databasePool as DatabasePool: databasePool.releaseMemory()
        case let queue as DatabaseQueue: queue.releaseMemory()
        default: break
        }
    }

    /// Bytes the page cache of a read connection holds now (with one read
    /// connection, always the same one).
    func readerCacheBytes() throws -> Int {
        try pool.read { Self.cacheBytes($0) }
    }

    /// Bytes the page cache of the writing connection holds now.
    func writerCacheBytes() -> Int {
        pool.writeWithoutTransaction { Self.cacheBytes($0) }
    }

    /// Bytes the page cache of the connection `db` holds now.
    static func cacheBytes(_ db: Database) -> Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return Int(current)
    }
}
