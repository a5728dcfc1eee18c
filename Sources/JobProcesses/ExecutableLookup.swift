#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds the file `execve` will run, the way `execvp` would, so a missing or
/// non-executable program gets a clear error before anything is spawned.
enum ExecutableLookup {
    /// Used when the child's environment has no `PATH` (as glibc's execvp).
    static let defaultSearchPath = "/bin:/usr/bin"

    /// The path to exec for `name`: itself when it holds a slash (relative
    /// ones are taken against `directory`, where the child starts), else the
    /// first executable regular file `DIR/name` along `searchPath`.
    static func resolve(
        _ name: String, searchPath: String?, directory: String?, command: String
    ) throws(ProcessError) -> String {
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
                message: "cannot run `\(command)`: \(refusal.path) \(refusal.reason), and no other `\(name)` is on PATH (\(searched))",
                command: command, errno: EACCES)
        }
        throw ProcessError(
            code: .executableNotFound,
            message: "cannot run `\(command)`: `\(name)` is not on PATH (\(searched)); install it, give its absolute path, or set PATH in the stage's `env`",
            command: command, errno: ENOENT)
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
