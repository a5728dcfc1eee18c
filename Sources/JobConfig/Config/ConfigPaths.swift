/// Lexical path handling for configuration: no file system access, no
/// symlink resolution, so results are predictable and testable.
public enum ConfigPaths {
    /// `path` if absolute, else `path` under `folder`; `.` and `..`
    /// components are folded (`/etc/jobd/../var/x` → `/etc/var/x`).
    /// `~` is not expanded: write an absolute path.
    public static func resolve(_ path: String, against folder: String) -> String {
        normalize(path.hasPrefix("/") ? path : folder + "/" + path)
    }

    /// The folder holding `path` (`/etc/jobd/jobd.yaml` → `/etc/jobd`).
    public static func folder(of path: String) -> String {
        let normalized = normalize(path)
        guard let slash = normalized.lastIndex(of: "/") else { return "." }
        return slash == normalized.startIndex ? "/" : String(normalized[..<slash])
    }

    /// Folds `.`, `..` and repeated slashes of an absolute or relative path.
    public static func normalize(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".":
                continue
            case "..":
                if let last = parts.last, last != ".." {
                    parts.removeLast()
                } else if !absolute {
                    parts.append(part)
                }
            default:
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
