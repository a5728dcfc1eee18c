import CProcessSupport
import Locking
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds the file `execve` will run, the way `execvp` would, so a missing or
/// non-executable program gets a clear error before anything is spawned.
enum ExecutableLookup {
    /// How long a program found along PATH is remembered (`resolveRemembering`).
    static let rememberFor: Int64 = 1_000_000_000

    private struct Key: Hashable {
        var name: String
        var searchPath: String?
        var directory: String?
    }

    /// Programs found along PATH lately, with when each is forgotten.
    private static let remembered = Mutex<[Key: (path: String, until: Int64)]>([:])

    /// Used when the child's environment has no `PATH` (as glibc's execvp).
    static let defaultSearchPath = "/bin:/usr/bin"

    /// `resolve`, remembered for a second for a name looked up along PATH:
    /// a lookup along a dozen folders is a dozen stat calls, ~12 µs a
    /// process. A program installed or removed meanwhile is seen
    /// within the second; one that no longer runs at its remembered path is
    /// looked up again at once (`ProcessRunner` does, when the spawn fails).
    /// `remembered` says whether the path came from memory.
    static func resolveRemembering(
        _ name: String, searchPath: String?, directory: String?, command: String
    ) throws(ProcessError) -> (path: String, remembered: Bool) {
        guard !name.utf8.contains(UInt8(ascii: "/")) else {
            return (try resolve(name, searchPath: searchPath, directory: directory, command: command), false)
        }
        let key = Key(name: name, searchPath: searchPath, directory: directory)
        let now = jobd_monotonic_ns()
        if let known = remembered.withAnnouncedLock({ $0[key] }), known.until > now {
            return (known.path, true)
        }
        let path = try resolve(name, searchPath: searchPath, directory: directory, command: command)
        remembered.withAnnouncedLock { memory in
            if memory.count >= 256 { memory.removeAll() }
            memory[key] = (path, now + rememberFor)
        }
        return (path, false)
    }

    /// Drops what `resolveRemembering` remembers for `name` there.
    static func forget(_ name: String, searchPath: String?, directory: String?) {
        let key = Key(name: name, searchPath: searchPath, directory: directory)
        _ = remembered.withAnnouncedLock { $0.removeValue(forKey: key) }
    }

    /// The path to exec for `name`: itself when it holds a slash (relative
    /// ones are taken against `directory`, where the child starts), else the
    /// first executable regular file `DIR/name` along `searchPath`.
    static func resolve(
        _ name: String, searchPath: String?, directory: String?, command: String
    ) throws(ProcessError) -> String {
        if let found = found(name, along: searchPath ?? defaultSearchPath, directory: directory) {
            return found
        }
        if name.contains("/") {
            let path = absolute(name, in: directory)
            switch check(path) {
            case .ok: return name
            case .missing:
                throw ProcessError(
                    code: .executableNotFound,
                    message: "cannot run `\(command)`: \(path) does not exist; check the path in the stage's `run`",
                    command: command, errno: ENOENT)
            case let .notExecutable(reason):
                throw ProcessError(
                    code: .notExecutable,
                    message: "cannot run `\(command)`: \(path) \(reason)",
                    command: command, errno: EACCES)
            }
        }
        guard !name.isEmpty else {
            throw ProcessError(code: .invalidCommand, message: "cannot run an empty program name", command: command)
        }
        let searched = searchPath ?? defaultSearchPath
        var firstRefusal: (path: String, reason: String)?
        for entry in searched.split(separator: ":", omittingEmptySubsequences: false) {
            let folder = entry.isEmpty ? "." : String(entry)
            let candidate = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            switch check(absolute(candidate, in: directory)) {
            case .ok: return candidate
            case .missing: continue
            case let .notExecutable(reason):
                if firstRefusal == nil { firstRefusal = (candidate, reason) }
            }
        }
        if let refusal = firstRefusal {
            throw ProcessError(
                code: .notExecutable,
                message:
                    "cannot run `\(command)`: \(refusal.path) \(refusal.reason), and no other `\(name)` is on PATH (\(searched))",
                command: command, errno: EACCES)
        }
        throw ProcessError(
            code: .executableNotFound,
            message:
                "cannot run `\(command)`: `\(name)` is not on PATH (\(searched)); install it, give its absolute path, or set PATH in the stage's `env`",
            command: command, errno: ENOENT)
    }

    /// The common case in C, without a String per candidate (~17 µs a
    /// process less on a PATH of a dozen folders): a plain name
    /// found as an executable file along the path. Nil for anything else,
    /// which `resolve` then looks up in full, with its reasons.
    private static func found(_ name: String, along searchPath: String, directory: String?) -> String? {
        guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "/")) else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096) { buffer -> String? in
            let found: Int32
            if let directory {
                found = jobd_find_executable(name, searchPath, directory, buffer.baseAddress, buffer.count)
            } else {
                found = jobd_find_executable(name, searchPath, nil, buffer.baseAddress, buffer.count)
            }
            return found == 1 ? String(cString: buffer.baseAddress!) : nil
        }
    }

    enum Check {
        case ok
        case missing
        case notExecutable(String)
    }

    static func check(_ path: String) -> Check {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == EACCES ? .notExecutable("is in a folder this process may not search") : .missing
        }
        if info.st_mode & S_IFMT == S_IFDIR { return .notExecutable("is a folder, not a program") }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notExecutable("is not a regular file") }
        guard access(path, X_OK) == 0 else { return .notExecutable("is not executable (check its mode: chmod +x)") }
        return .ok
    }

    static func absolute(_ path: String, in directory: String?) -> String {
        guard !path.hasPrefix("/"), let directory else { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}
