import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Time zones by their tz database names, accepted as systemd accepts them.
public enum ScheduleTimeZone {
    /// Where the system's tz database lives.
    public static let databasePath = "/usr/share/zoneinfo"

    /// The zone named `name` (`Europe/Berlin`, `UTC`), or nil if it is not
    /// one of the system tz database.
    ///
    /// Like systemd: `UTC` always; otherwise letters, digits, `-`, `_`, `+`
    /// and single `/` between them, naming a TZif file under
    /// ``databasePath``. The zone must also be one Foundation knows (its
    /// rules are what the schedule math reads).
    public static func named(_ name: String) -> TimeZone? {
        if name == "UTC" { return TimeZone(identifier: "UTC") }
        guard isWellFormed(name), hasTZifFile(name), let zone = TimeZone(identifier: name) else { return nil }
        return zone
    }

    static func isWellFormed(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "/"), name.utf8.count < 4096 else { return false }
        var lastWasSlash = false
        for byte in name.utf8 {
            let isSlash = byte == UInt8(ascii: "/")
            let allowed = (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
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
