import Foundation
internal import GRDB
import JobStore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A file as the kernel names it: device and inode. A path that names
/// another identity than before was removed and made again, or replaced.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// The database's files as the store opened them. The `-wal` file is
    /// taken when first seen: SQLite makes it with the first transaction.
    final class Watch: Sendable {
        let path: String
        let database: FileIdentity?
        private let wal: Mutex<FileIdentity?>

        init(path: String) {
            self.path = path
            database = FileIdentity(path: path)
            wal = Mutex(FileIdentity(path: path + "-wal"))
        }

        /// Why the files are no longer the ones the store has open, or nil.
        func problem() -> String? {
            let now = FileIdentity(path: path)
            if now == nil || now != database {
                let what = now == nil ? "was removed" : "was replaced by another file"
                return "the job database \(path) \(what) while this process had it open; "
                    + "what it writes now would go to a file no other process sees"
            }
            let walPath = path + "-wal"
            let walNow = FileIdentity(path: walPath)
            return wal.withLock { seen -> String? in
                guard let known = seen else {
                    seen = walNow
                    return nil
                }
                guard walNow != known else { return nil }
                let what = walNow == nil ? "was removed" : "was replaced by another file"
                return "the write-ahead log \(walPath) \(what) while this process had the database open: "
                    + "commits not yet copied into \(path) are lost, and the database may be damaged. "
                    + "Stop every process using it, run `sqlite3 \(path) 'PRAGMA integrity_check'`, and restore "
                    + "the newest backup if it does not print ok (docs/operations.md)"
            }
        }
    }
}

extension SQLiteJobStore {
    /// Throws ``JobStoreError/Code/databaseReplaced`` when the database's
    /// path, or its `-wal` file, no longer names the file this store has
    /// open (someone removed or replaced it). A daemon calls it every few
    /// seconds and stops when it throws: the store cannot recover from this,
    /// and a restart opens the file the path names.
    public func checkFiles() throws {
        if let problem = files.problem() { throw JobStoreError(.databaseReplaced, problem) }
    }

    /// `PRAGMA quick_check`: a damaged database is refused at open.
    static func quickCheck(_ db: Database, path: String) throws {
        let findings = try String.fetchAll(db, sql: "PRAGMA quick_check(5)")
        guard findings != ["ok"] else { return }
        throw JobStoreError(
            .corrupt,
            "the job database \(path) is damaged: PRAGMA quick_check found \(findings.first ?? "a problem")"
                + (findings.count > 1 ? " (and more)" : "")
                + ". Stop every process using it and restore the newest backup (docs/operations.md, \"Restoring\"); "
                + "`sqlite3 \(path) .recover` may save what the backup lacks")
    }
}
