import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Time zones by their tz database names, accepted as systemd accepts them.
public enum ScheduleTimeZone {
    /// Where the system's tz database lives.
    public static let databasePath = "/usr/share/zoneinfo"
    /// The host's zone when `$TZ` does not name one.
    public static let localTimePath = "/etc/localtime"

    /// Why a name is not a zone jobd can read: a sentence fragment such as
    /// `not in /usr/share/zoneinfo`.
    public struct LookupError: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The zone named `name` (`Europe/Berlin`, `UTC`), or nil if it is not
    /// one jobd can read (``lookup(_:)`` says why).
    public static func named(_ name: String) -> TimeZone? {
        try? lookup(name).get()
    }

    /// The zone named `name`, or why it is refused.
    ///
    /// Like systemd: `UTC` always; otherwise letters, digits, `-`, `_`, `+`
    /// and single `/` between them, naming a TZif file under
    /// ``databasePath``. The zone's rules are Foundation's, so a file whose
    /// name Foundation does not know is read as the zone it links to
    /// (`posix/Europe/Berlin`, `posixrules`, `localtime`); the `right/`
    /// zones, which count leap seconds, are refused.
    public static func lookup(_ name: String) -> Result<TimeZone, LookupError> {
        if name == "UTC", let utc = TimeZone(identifier: "UTC") { return .success(utc) }
        guard isWellFormed(name) else {
            return .failure(LookupError(reason: "not a name of the tz database"))
        }
        // Before Foundation, which would read such a file as any other.
        if name.hasPrefix("right/") {
            return .failure(
                LookupError(
                    reason: "a zone that counts leap seconds (the tz database's right/ tree), which the system clock "
                        + "does not; write \(name.dropFirst(6))"))
        }
        guard hasTZifFile(name) else {
            return .failure(LookupError(reason: "not in \(databasePath)"))
        }
        if let zone = TimeZone(identifier: name) { return .success(zone) }
        for alias in [
            linkedName(databasePath + "/" + name), name.hasPrefix("posix/") ? String(name.dropFirst(6)) : nil,
        ] {
            if let alias, alias != name, isWellFormed(alias), hasTZifFile(alias), let zone = TimeZone(identifier: alias)
            {
                return .success(zone)
            }
        }
        return .failure(
            LookupError(
                reason: "in \(databasePath), but not a zone whose rules jobd can read (Foundation does not know it)"))
    }

    /// The name under ``databasePath`` of the file `path` resolves to, if
    /// it lies there.
    static func linkedName(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        let target = String(cString: resolved)
        let root =
            realpath(databasePath, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? databasePath
        guard target.hasPrefix(root + "/") else { return nil }
        return String(target.dropFirst(root.count + 1))
    }

    static func isWellFormed(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "/"), name.utf8.count < 4096 else { return false }
        var lastWasSlash = false
        for byte in name.utf8 {
            let isSlash = byte == UInt8(ascii: "/")
            let allowed =
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "+") || isSlash
            if !allowed || (isSlash && lastWasSlash) { return false }
            lastWasSlash = isSlash
        }
        return !lastWasSlash
    }

    /// A regular file (after symbolic links) that starts with the TZif magic.
    static func hasTZifFile(_ name: String) -> Bool {
        let fd = open(databasePath + "/" + name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        var magic = [UInt8](repeating: 0, count: 4)
        let count = magic.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4) }
        return count == 4 && magic == Array("TZif".utf8)
    }
}
