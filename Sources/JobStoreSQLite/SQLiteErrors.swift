import Foundation
internal import GRDB
import JobStore

extension JobStoreError {
    /// Turns whatever a database access threw into a ``JobStoreError`` that
    /// says what failed and what to do.
    package static func wrap(_ error: any Error, path: String, doing what: String) -> JobStoreError {
        if let error = error as? JobStoreError { return error }
        guard let error = error as? DatabaseError else {
            return JobStoreError(.database, "could not \(what) in \(path): \(error)", underlying: error)
        }
        let detail = error.message.map { " (SQLite: \($0))" } ?? ""
        switch error.resultCode {
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH:
            return permissionDenied(path: path, doing: what, detail: detail, underlying: error)
        case .SQLITE_CANTOPEN:
            if (try? checkWritable(path: path)) == nil {
                return permissionDenied(path: path, doing: what, detail: detail, underlying: error)
            }
            return JobStoreError(
                .cannotOpen,
                "could not \(what): SQLite cannot open \(path)\(detail). Check that the path names a "
                    + "file (not a folder) on a local file system, and that its folder exists.",
                underlying: error)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return JobStoreError(
                .busy,
                "could not \(what) in \(path): another process held the database's write lock for longer "
                    + "than the busy timeout\(detail). Look for a stuck process holding it (an open sqlite3 "
                    + "shell in a transaction?), or raise the store's busyTimeout.",
                underlying: error)
        case .SQLITE_TOOBIG:
            return JobStoreError(
                .valueTooLarge,
                "could not \(what) in \(path): a value is larger than SQLite stores\(detail); values are capped by "
                    + "store.value-cap in jobd.yaml",
                underlying: error)
        case .SQLITE_FULL:
            return JobStoreError(
                .diskFull,
                "could not \(what) in \(path): the disk is full\(detail). Free space on its file system, "
                    + "or prune old jobs (jobs older than the retention are deleted by jobd).",
                underlying: error)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return JobStoreError(
                .corrupt,
                "could not \(what): \(path) is not a jobd database or is damaged\(detail). Check the "
                    + "path; if it is right, stop every process using it and restore the newest backup (docs/operations.md, "
                    + "\"Restoring\"); `sqlite3 \(path) .recover` into a new file may save what the backup lacks.",
                underlying: error)
        case .SQLITE_IOERR:
            return JobStoreError(
                .io,
                "could not \(what) in \(path): the operating system failed a read or write\(detail). "
                    + "Check the disk and the kernel log.",
                underlying: error)
        default:
            return JobStoreError(.database, "could not \(what) in \(path)\(detail)", underlying: error)
        }
    }

    /// What a user who cannot open or write the database needs to hear.
    static func permissionDenied(
        path: String, doing what: String, detail: String = "", underlying: (any Error)? = nil
    ) -> JobStoreError {
        let folder = (path as NSString).deletingLastPathComponent
        let folderText = folder.isEmpty ? "." : folder
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: folderText, isDirectory: &isDirectory) || !isDirectory.boolValue {
            return JobStoreError(
                .cannotOpen,
                "could not \(what): the folder \(folderText) of the database \(path) does not exist\(detail). "
                    + "Create it, or point `database:` in jobd.yaml elsewhere.",
                underlying: underlying)
        }
        let uid = geteuid()
        let user = getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(uid)"
        return JobStoreError(
            .permissionDenied,
            "could not \(what): permission denied writing the database \(path) as user \(user)\(detail). "
                + "jobd and jobctl need read and write access to the file and to its folder \(folderText) "
                + "(SQLite creates \(path)-wal and \(path)-shm there). Fix the owner or mode "
                + "(chown/chmod), or run as the user that owns the database.",
            underlying: underlying)
    }

    /// Checks up front that this user may create or write the database file,
    /// so the error names the real cause rather than a later SQLite failure.
    static func checkWritable(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        let folderText = folder.isEmpty ? "." : folder
        let fileExists = access(path, F_OK) == 0
        if fileExists {
            if access(path, R_OK | W_OK) != 0 {
                throw permissionDenied(path: path, doing: "open the job database", detail: " (\(errnoText()))")
            }
            for companion in [path + "-wal", path + "-shm"] where access(companion, F_OK) == 0 {
                if access(companion, R_OK | W_OK) != 0 {
                    throw permissionDenied(
                        path: path, doing: "open the job database", detail: " (\(companion): \(errnoText()))")
                }
            }
        }
        if access(folderText, W_OK | X_OK) != 0 {
            throw permissionDenied(
                path: path, doing: "open the job database", detail: " (\(folderText): \(errnoText()))")
        }
    }

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
