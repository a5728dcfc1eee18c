import Foundation

/// Timestamps are stored as ISO-8601 UTC text with milliseconds,
/// `2026-11-21T05:54:03.127Z`: readable in `sqlite3`, understood by SQLite's
/// date functions, and — being fixed-width — ordered like the times they
/// name, so indexes and `<` comparisons work on the text.
package enum Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00Z; dates past what an Int64
    /// holds (or not a number) are clamped, never a trap.
    package static func milliseconds(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        guard ms.isFinite else { return ms.isNaN ? 0 : ms > 0 ? .max : .min }
        return Int64(exactly: ms) ?? (ms > 0 ? .max : .min)
    }

    /// The latest time the text form holds: 9999-12-31T23:59:59.999Z.
    package static let latest = Date(timeIntervalSince1970: 253_402_300_799.999)

    /// Whether `date` has a four-digit year, 1970 or later: what a stored
    /// time may be. A later date would be written with its year modulo
    /// 10,000 and sort before today.
    package static func isStorable(_ date: Date) -> Bool {
        (0...253_402_300_799_999).contains(milliseconds(date))
    }

    package static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    package static func text(_ date: Date) -> String {
        text(milliseconds: milliseconds(date))
    }

    package static func now() -> String {
        text(Date())
    }

    /// Formats without Foundation's formatters: this runs on every write.
    package static func text(milliseconds ms: Int64) -> String {
        let (days, msOfDay) = floorDivide(ms, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, _ digits: Int, at offset: Int) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
        }
        put(year, 4, at: 0)
        bytes[4] = UInt8(ascii: "-")
        put(month, 2, at: 5)
        bytes[7] = UInt8(ascii: "-")
        put(day, 2, at: 8)
        bytes[10] = UInt8(ascii: "T")
        put(msOfDay / 3_600_000, 2, at: 11)
        bytes[13] = UInt8(ascii: ":")
        put(msOfDay / 60_000 % 60, 2, at: 14)
        bytes[16] = UInt8(ascii: ":")
        put(msOfDay / 1000 % 60, 2, at: 17)
        bytes[19] = UInt8(ascii: ".")
        put(msOfDay % 1000, 3, at: 20)
        bytes[23] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…][Z]` (a space may replace the `T`,
    /// as in SQLite's `datetime()`); times are UTC.
    package static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return nil }
        func number(_ offset: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[offset..<offset + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millis: Int64 = 0
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale: Int64 = 100
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                millis += Int64(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "Z") { index += 1 }
        guard index == bytes.count else { return nil }
        let days = self.days(fromYear: year, month: month, day: day)
        let ms = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
        return date(milliseconds: ms)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let quotient = a >= 0 ? a / b : (a - b + 1) / b
        return (quotient, a - quotient * b)
    }

    /// Days since 1970-01-01 → proleptic Gregorian date. Works in 400-year
    /// eras (146,097 days) counted from 0000-03-01, so that the leap day is
    /// the last day of its year.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let (era, dayOfEra) = floorDivide(shifted, 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153  // 0 = March … 11 = February
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let (era, yearOfEra) = floorDivide(marchYear, 400)
        let marchMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * marchMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
