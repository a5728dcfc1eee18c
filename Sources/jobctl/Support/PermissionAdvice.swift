import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one line a user who may not write the job database reads: who they
/// are, which file, and the group to join.
enum PermissionAdvice {
    /// The group an installed jobd gives its database (see the systemd unit).
    static let defaultGroup = "jobd"

    static func databaseMessage(path: String) -> String {
        let user = userName()
        let group = owningGroup(of: path)
        return "permission denied: user \(user) may not write the job database \(path) (nor create files in its "
            + "folder); join group `\(group)` (sudo usermod -aG \(group) \(user), then log in again), or run as "
            + "the user that owns it"
    }

    static func socketMessage(path: String) -> String {
        let user = userName()
        let group = owningGroup(of: path)
        return "permission denied: user \(user) may not connect to jobd's socket \(path); join group `\(group)` "
            + "(sudo usermod -aG \(group) \(user), then log in again)"
    }

    static func userName() -> String {
        let uid = geteuid()
        guard let entry = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: entry.pointee.pw_name)
    }

    /// The group of the file, else of its folder (when the folder cannot
    /// be searched), else jobd's; root's group is never the one to join.
    static func owningGroup(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        for candidate in [path, folder.isEmpty ? "." : folder] {
            var info = stat()
            guard stat(candidate, &info) == 0 else { continue }
            guard info.st_gid != 0, let entry = getgrgid(info.st_gid) else { return defaultGroup }
            return String(cString: entry.pointee.gr_name)
        }
        return defaultGroup
    }
}
