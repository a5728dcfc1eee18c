import Foundation
import Synchronization

/// `tm_isdst` as glibc reports it, read from the system tz database.
///
/// Foundation (ICU) and glibc agree on offsets but not always on which of
/// them is "daylight saving": the tz database gives Europe/Dublin a
/// *negative* DST (Irish Standard Time, +1, is standard; winter GMT is the
/// DST), which glibc reports as `tm_isdst = 1` in winter and ICU as DST in
/// summer. systemd's search reads the flag, so it is taken from the zone's
/// TZif file: each UTC offset gets the DST flag of the last transition to
/// it. Offsets the file does not list fall back to Foundation's flag.
enum DaylightSavingFlags {
    private static let cache = Mutex<[String: [Int64: Bool]]>([:])

    /// The DST flag of each UTC offset of zone `identifier`; empty when its
    /// file cannot be read.
    static func flags(for identifier: String) -> [Int64: Bool] {
        if let known = cache.withLock({ $0[identifier] }) { return known }
        let flags = read(identifier)
        cache.withLock { $0[identifier] = flags }
        return flags
    }

    static func read(_ identifier: String) -> [Int64: Bool] {
        let path = ScheduleTimeZone.databasePath + "/" + (identifier == "GMT" ? "UTC" : identifier)
        guard ScheduleTimeZone.isWellFormed(identifier),
            let data = FileManager.default.contents(atPath: path)
        else { return [:] }
        return parse(Array(data)) ?? [:]
    }

    /// TZif (RFC 8536): the version 2+ block if there is one, else version 1.
    static func parse(_ bytes: [UInt8]) -> [Int64: Bool]? {
        func count(_ offset: Int, _ index: Int) -> Int? {
            let at = offset + 20 + index * 4
            guard at + 4 <= bytes.count else { return nil }
            return Int(
                UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
                    | UInt32(bytes[at + 3]))
        }
        func block(at offset: Int, timeSize: Int) -> (flags: [Int64: Bool], end: Int)? {
            guard bytes.count >= offset + 44, bytes[offset..<(offset + 4)].elementsEqual("TZif".utf8),
                let isUTCCount = count(offset, 0), let isStandardCount = count(offset, 1),
                let leapCount = count(offset, 2), let timeCount = count(offset, 3),
                let typeCount = count(offset, 4), let characterCount = count(offset, 5)
            else { return nil }
            let indices = offset + 44 + timeCount * timeSize
            let types = indices + timeCount
            let end =
                types + typeCount * 6 + characterCount + leapCount * (timeSize + 4) + isStandardCount
                + isUTCCount
            guard end <= bytes.count, typeCount > 0 else { return nil }
            func type(_ index: Int) -> (offset: Int64, isDST: Bool)? {
                guard index < typeCount else { return nil }
                let at = types + index * 6
                let raw =
                    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
                    | UInt32(bytes[at + 3])
                return (Int64(Int32(bitPattern: raw)), bytes[at + 4] != 0)
            }
            var flags: [Int64: Bool] = [:]
            if let first = type(0) { flags[first.offset] = first.isDST }
            for transition in 0..<timeCount {
                if let next = type(Int(bytes[indices + transition])) { flags[next.offset] = next.isDST }
            }
            return (flags, end)
        }
        guard let first = block(at: 0, timeSize: 4) else { return nil }
        guard bytes[4] >= UInt8(ascii: "2"), let second = block(at: first.end, timeSize: 8) else { return first.flags }
        return second.flags
    }
}
