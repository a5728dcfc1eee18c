import Foundation
import JobConfig
import JobControl
import JobStore

#if canImport(Glibc)
import Glibc
#endif

/// Why a jobctl command failed: a stable ``Code`` (which also decides the
/// exit status) and a one-line message that says what failed and what to do.
///
/// `details` holds extra lines printed after the message, for the failures
/// that are lists by nature (every problem of a definitions folder).
struct JobctlError: Error, Sendable, CustomStringConvertible {
    struct Code: Hashable, Sendable, CustomStringConvertible {
        let rawValue: String
        let exitStatus: ExitStatus

        private init(_ rawValue: String, _ exitStatus: ExitStatus) {
            self.rawValue = rawValue
            self.exitStatus = exitStatus
        }

        var description: String { rawValue }

        /// The job ended rejected (`wait`, `submit --wait`).
        static let jobRejected = Code("job-rejected", .notFulfilled)
        /// The job ended cancelled (`wait`, `submit --wait`).
        static let jobCancelled = Code("job-cancelled", .notFulfilled)
        /// A command line that parses but makes no sense.
        static let usage = Code("usage", .usage)
        /// A value over the store's cap.
        static let valueTooLarge = Code("value-too-large", .dataError)
        /// The job is not in a state that allows the operation.
        static let invalidState = Code("invalid-state", .dataError)
        /// A database row jobd cannot read (written by hand): the message names its table, row and column.
        static let badRow = Code("bad-row", .dataError)
        /// `validate` found errors.
        static let invalidDefinitions = Code("invalid-definitions", .dataError)
        /// An input or batch file that cannot be read.
        static let unreadableInput = Code("unreadable-input", .noInput)
        static let unknownJob = Code("unknown-job", .unknown)
        static let unknownDefinition = Code("unknown-definition", .unknown)
        /// `daemon`: jobd is not running.
        static let daemonNotRunning = Code("daemon-not-running", .unavailable)
        /// jobd answered, but not as it should.
        static let daemonFailed = Code("daemon-failed", .unavailable)
        static let database = Code("database", .ioError)
        static let busy = Code("busy", .tempFail)
        /// The PostgreSQL server cannot be reached now.
        static let databaseUnavailable = Code("database-unavailable", .tempFail)
        /// `wait --timeout` ran out.
        static let timedOut = Code("timed-out", .tempFail)
        static let permissionDenied = Code("permission-denied", .noPermission)
        /// No config file, or one with errors.
        static let config = Code("config", .config)
        static let internalError = Code("internal", .software)
    }

    var code: Code
    var message: String
    var details: [String]
    /// The command already printed its answer on stdout (`wait --json`
    /// prints the job, then exits 1 if it was rejected): no JSON error follows.
    var reportedOnStdout = false

    init(_ code: Code, _ message: String, details: [String] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    var exitStatus: ExitStatus { code.exitStatus }

    var description: String { message }
}

extension JobctlError {
    /// A store failure, in jobctl's words where they help more than the store's.
    init(_ error: JobStoreError) {
        switch error.code {
        case .permissionDenied:
            self.init(.permissionDenied, error.message)
        case .jobNotFound:
            self.init(
                .unknownJob, error.jobID.map { "no job \($0) (it never existed, or was pruned)" } ?? error.message)
        case .valueTooLarge:
            self.init(.valueTooLarge, error.message)
        case .invalidState:
            self.init(.invalidState, error.message)
        case .invalidArgument:
            self.init(.usage, error.message)
        case .busy:
            self.init(.busy, error.message)
        case .unavailable:
            self.init(.databaseUnavailable, error.message)
        case .badRow:
            self.init(.badRow, error.message)
        default:
            self.init(.database, error.message)
        }
    }

    init(_ error: ConfigLocatorError) {
        self.init(.config, error.message)
    }

    /// Any error from a command's body: ours as they are, the store's and the
    /// locator's translated, anything else an internal error.
    static func from(_ error: any Error) -> JobctlError {
        switch error {
        case let error as JobctlError: error
        case let error as JobStoreError: JobctlError(error)
        case let error as ConfigLocatorError: JobctlError(error)
        default: JobctlError(.internalError, "unexpected error: \(error)")
        }
    }
}

/// The one line a user who may not write the job database reads: who they
/// are, which file, and the group to join.
enum PermissionAdvice {
    /// The group an installed jobd gives its database (see the systemd unit).
    static let defaultGroup = "jobd"

    static func databaseMessage(path: String) -> String {
        if isOnReadOnlyFilesystem(path) {
            return "the job database \(path) is on a read-only filesystem: jobctl writes beside it even to read it "
                + "(the WAL's -shm file); mount it read-write, or copy the database with its -wal file elsewhere"
        }
        let user = userName()
        // Every command opens the database read-write, even one that only
        // reads: SQLite writes its -shm and -wal files beside it.
        let start =
            "permission denied: user \(user) may not open the job database \(path) for writing, "
            + "which jobctl needs even to read it (SQLite's -wal and -shm files beside it)"
        // Owning the file, or being in its group already, joining a group
        // changes nothing: the file's or folder's mode is what refuses.
        if let blocked = modeProblem(path) { return start + "; " + blocked }
        guard let group = owningGroup(of: path) else {
            // Root's group is not one to join: the file needs jobd's.
            let folder = (path as NSString).deletingLastPathComponent
            return start + "; the file and its folder belong to group root, which no user should join: give them "
                + "jobd's group (sudo chgrp \(defaultGroup) \(path) \(folder.isEmpty ? "." : folder), with mode g+rw "
                + "on the file and g+rwx on the folder), or run as the user that owns them"
        }
        return start + "; join group `\(group)` (sudo usermod -aG \(group) \(user), then log in again), or run as "
            + "the user that owns it"
    }

    /// Whether the database's folder is mounted read-only: no mode or
    /// group would let anyone write there.
    static func isOnReadOnlyFilesystem(_ path: String) -> Bool {
        let folder = (path as NSString).deletingLastPathComponent
        var info = statvfs()
        return statvfs(folder.isEmpty ? "." : folder, &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// When this user owns the database (or its folder) or is in its group
    /// and the mode is what denies writing: what to change.
    static func modeProblem(_ path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        let groups = Set(currentGroups())
        for (candidate, what, need) in [(path, "the file", "rw"), (folder.isEmpty ? "." : folder, "its folder", "rwx")]
        {
            var info = stat()
            guard stat(candidate, &info) == 0 else { continue }
            let mode = String(info.st_mode & 0o7777, radix: 8)
            if info.st_uid == geteuid() {
                if access(candidate, candidate == path ? (R_OK | W_OK) : (W_OK | X_OK)) != 0 {
                    return "you own \(what) \(candidate) but its mode \(mode) denies you; chmod u+\(need) \(candidate)"
                }
            } else if groups.contains(info.st_gid),
                access(candidate, candidate == path ? (R_OK | W_OK) : (W_OK | X_OK)) != 0
            {
                let group = getgrgid(info.st_gid).map { String(cString: $0.pointee.gr_name) } ?? "\(info.st_gid)"
                return
                    "you are in its group `\(group)` already, but the mode \(mode) of \(what) \(candidate) gives the "
                    + "group no write; chmod g+\(need) \(candidate)"
            }
        }
        return nil
    }

    /// The effective group and the supplementary groups of this process.
    static func currentGroups() -> [gid_t] {
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(0, count)))
        let got = getgroups(count, &groups)
        return [getegid()] + groups.prefix(Int(max(0, got)))
    }

    static func socketMessage(path: String) -> String {
        let user = userName()
        let group = owningGroup(of: path) ?? defaultGroup
        return "permission denied: user \(user) may not connect to jobd's socket \(path); join group `\(group)` "
            + "(sudo usermod -aG \(group) \(user), then log in again)"
    }

    static func userName() -> String {
        let uid = geteuid()
        guard let entry = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: entry.pointee.pw_name)
    }

    /// The group of the file, else of its folder (when the folder cannot
    /// be searched), else jobd's; nil when it is root's, never a group to join.
    static func owningGroup(of path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        for candidate in [path, folder.isEmpty ? "." : folder] {
            var info = stat()
            guard stat(candidate, &info) == 0 else { continue }
            guard info.st_gid != 0 else { return nil }
            guard let entry = getgrgid(info.st_gid) else { return defaultGroup }
            return String(cString: entry.pointee.gr_name)
        }
        return defaultGroup
    }
}
