import Foundation

/// Instants as RFC 3339 text: how `jobctl calendar` reads `--from` and
/// prints fire times, and how jobd's log names an occurrence.
public enum RFC3339 {
    /// Why a text is not an RFC 3339 time, in a few words.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// `2026-11-24T09:00:00Z`, `2026-11-24T10:00:00.5+01:00`: a full date,
    /// `T`, a time with optional fraction (at most 9 digits; a `Date` keeps
    /// microseconds), then `Z` or `±HH:MM` (`t` and `z` may be lowercase, as
    /// RFC 3339 allows). Every field is checked against its range and the
    /// day against its month: `2026-02-30` and `+25:00` are refused, as is
    /// second 60 (a leap second: no clock jobd reads shows one).
    public static func date(_ text: String) throws(ParseError) -> Date {
        var scanner = Scanner(Array(text.utf8))
        let year = try scanner.digits(4, "the year")
        try scanner.expect("-", "after the year")
        let month = try scanner.digits(2, "the month")
        try scanner.expect("-", "after the month")
        let day = try scanner.digits(2, "the day")
        guard scanner.take("T") || scanner.take("t") else {
            throw ParseError(reason: "a 'T' must separate the date from the time")
        }
        let hour = try scanner.digits(2, "the hour")
        try scanner.expect(":", "after the hour")
        let minute = try scanner.digits(2, "the minute")
        try scanner.expect(":", "after the minute")
        let second = try scanner.digits(2, "the second")
        var micros: Int64 = 0
        if scanner.take(".") {
            var digits = 0
            while let digit = scanner.digit() {
                if digits < 6 { micros = micros * 10 + Int64(digit) }
                digits += 1
            }
            guard digits > 0 else { throw ParseError(reason: "a '.' must be followed by the fraction's digits") }
            guard digits <= 9 else { throw ParseError(reason: "the fraction has more than 9 digits") }
            if digits < 6 { for _ in digits..<6 { micros *= 10 } }
        }
        var offset = 0
        if scanner.take("Z") || scanner.take("z") {
        } else if let sign = scanner.sign() {
            let hours = try scanner.digits(2, "the offset's hours")
            try scanner.expect(":", "in the offset")
            let minutes = try scanner.digits(2, "the offset's minutes")
            guard hours <= 23 else { throw ParseError(reason: "the offset's hours are \(hours), over 23") }
            guard minutes <= 59 else { throw ParseError(reason: "the offset's minutes are \(minutes), over 59") }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            throw ParseError(reason: "the time must end with Z or an offset such as +01:00")
        }
        guard scanner.atEnd else { throw ParseError(reason: "unexpected text after the offset") }
        guard (1...12).contains(month) else { throw ParseError(reason: "month \(month) is out of range 01–12") }
        let days = CivilDate.daysInMonth(year: year, month: month)
        guard (1...days).contains(day) else {
            throw ParseError(
                reason: "day \(day) is out of range 01–\(days) for \(String(format: "%04d-%02d", year, month))")
        }
        guard hour <= 23 else { throw ParseError(reason: "hour \(hour) is out of range 00–23") }
        guard minute <= 59 else { throw ParseError(reason: "minute \(minute) is out of range 00–59") }
        guard second <= 59 else { throw ParseError(reason: "second \(second) is out of range 00–59 (no leap seconds)") }
        let seconds =
            CivilDate.days(year: year, month: month, day: day) * CivilDate.secondsPerDay
            + Int64(hour * 3600 + minute * 60 + second - offset)
        return Instant.date(micros: seconds * Instant.microsPerSecond + micros)
    }

    /// `2026-11-24T09:00:00Z` in UTC; with the fraction, to the
    /// microsecond and without trailing zeros, when there is one
    /// (`2026-11-24T00:00:07.5Z`).
    public static func string(_ date: Date) -> String {
        let micros = Instant.micros(date)
        let seconds = CivilDate.floorDivide(micros, Instant.microsPerSecond)
        let fraction = micros - seconds * Instant.microsPerSecond
        let days = CivilDate.floorDivide(seconds, CivilDate.secondsPerDay)
        let (year, month, day) = CivilDate.date(days: days)
        let time = seconds - days * CivilDate.secondsPerDay
        var text = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, Int(time / 3600),
            Int(time / 60 % 60), Int(time % 60))
        if fraction != 0 {
            var digits = String(format: "%06lld", fraction)
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text + "Z"
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func expect(_ character: Unicode.Scalar, _ where: String) throws(ParseError) {
            guard take(character) else { throw ParseError(reason: "expected '\(character)' \(`where`)") }
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else {
                return nil
            }
            defer { index += 1 }
            return Int(bytes[index] - UInt8(ascii: "0"))
        }

        mutating func digits(_ count: Int, _ what: String) throws(ParseError) -> Int {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { throw ParseError(reason: "\(what) must have \(count) digits") }
                value = value * 10 + digit
            }
            return value
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }
    }
}
