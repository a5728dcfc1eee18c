import Foundation

extension CalendarEvent {
    /// Parses `text` as systemd 252's `calendar_spec_from_string` does,
    /// accepting what it accepts (see the type's notes for the exceptions)
    /// and saying which field is wrong, and where, when it would refuse.
    ///
    ///     try CalendarEvent(parsing: "Mon..Fri *-*-* 09:00 Europe/Berlin")
    ///     try CalendarEvent(parsing: "*-*-* 25:00")  // throws: hour: 25 is out of range 0–23
    public init(parsing text: String) throws(ScheduleParseError) {
        var parser = CalendarParser(text: text)
        self = try parser.parse()
    }

    /// Parses `text` as ``init(parsing:)`` does, and refuses an expression
    /// two of whose occurrences may fall less than `minimumSpacing`
    /// microseconds apart (see ``CalendarParser/checkSpacing(_:minimum:)``),
    /// naming the item of the seconds field at fault.
    init(parsing text: String, minimumSpacing: Int) throws(ScheduleParseError) {
        var parser = CalendarParser(text: text)
        parser.minimumSpacing = minimumSpacing
        self = try parser.parse()
    }
}

/// The state of one parse. Offsets are UTF-8 offsets into the text.
struct CalendarParser {
    /// A component with the offset of its first character.
    struct Located {
        var component: CalendarComponent
        var offset: Int
    }

    let text: String
    let bytes: [UInt8]
    /// Where the part before a time zone ends.
    var end: Int
    var index = 0
    var weekdays = 0
    var year: [Located]?
    var month: [Located]?
    var day: [Located]?
    var hour: [Located]?
    var minute: [Located]?
    var microsecond: [Located]?
    var endOfMonth = false
    var utc = false
    var zoneName: String?
    var zone: TimeZone?
    /// A trailing word that is no known zone: a failure there is blamed on it.
    var unknownZone: (name: String, offset: Int, reason: String)?
    /// The least time, in microseconds, two occurrences may be apart; nil: no floor.
    var minimumSpacing: Int?

    static let usecPerSecond = 1_000_000
    static let maxComponents = ScheduleExpression.maxListItems

    init(text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
        self.end = bytes.count
    }

    func fail(_ code: ScheduleParseError.Code, _ field: String, at offset: Int, _ reason: String) -> ScheduleParseError
    {
        ScheduleParseError(code, .calendar, text, field: field, utf8Offset: offset, reason)
    }

    /// The byte at `offset`, 0 past the end (C string semantics).
    func byte(_ offset: Int) -> UInt8 { offset < end ? bytes[offset] : 0 }
    var current: UInt8 { byte(index) }

    mutating func skipSpaces() {
        while current == UInt8(ascii: " ") { index += 1 }
    }

    mutating func parse() throws(ScheduleParseError) -> CalendarEvent {
        splitTimeZone()
        do {
            try parseBody()
        } catch {
            if let unknownZone, zoneIsTheFault(error, unknownZone) {
                throw fail(
                    .unknownTimeZone, "time zone", at: unknownZone.offset,
                    "unknown time zone \"\(unknownZone.name)\": \(unknownZone.reason) "
                        + "(write e.g. Europe/Berlin or UTC)")
            }
            throw error
        }
        return try finish()
    }

    /// The parse failed at or after a last word that names no zone, or the
    /// text before that word parses alone: blame the word.
    func zoneIsTheFault(_ error: ScheduleParseError, _ zone: (name: String, offset: Int, reason: String)) -> Bool {
        if error.column >= Self.scalarOffset(zone.offset, in: text) { return true }
        var without = CalendarParser(text: text)
        without.end = zone.offset - 1
        return (try? without.parseBody()) != nil
    }

    /// ` UTC` (any case), else a last word naming a zone, is cut off.
    mutating func splitTimeZone() {
        if bytes.count >= 4, String(decoding: bytes[(bytes.count - 4)...], as: UTF8.self).uppercased() == " UTC" {
            utc = true
            end = bytes.count - 4
            zone = TimeZone(identifier: "UTC")
            return
        }
        guard let space = bytes.lastIndex(of: UInt8(ascii: " ")) else { return }
        let name = String(decoding: bytes[(space + 1)...], as: UTF8.self)
        switch ScheduleTimeZone.lookup(name) {
        case let .success(named):
            zoneName = name
            zone = named
            end = space
        case let .failure(error):
            if name.utf8.contains(where: { $0.isLetter }) { unknownZone = (name, space + 1, error.reason) }
        }
    }

    mutating func parseBody() throws(ScheduleParseError) {
        guard end > 0 else { throw fail(.empty, "expression", at: 0, "it is empty; write e.g. Mon..Fri *-*-* 09:00") }
        let body = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
        if let shorthand = Self.shorthands[body] {
            applyShorthand(shorthand)
            return
        }
        try parseWeekdays()
        if try parseDate() { return }
        try parseTime()
        guard index == end else { throw unexpected("expression", "the end of the expression") }
    }

    // MARK: Shorthands

    static let shorthands: [String: [(field: String, values: [Int])]] = {
        let midnight: [(field: String, values: [Int])] = [("hour", [0]), ("minute", [0]), ("second", [0])]
        let firstOfMonth = [("day", [1])] + midnight
        let yearly = [("month", [1])] + firstOfMonth
        return [
            "minutely": [("second", [0])],
            "hourly": [("minute", [0]), ("second", [0])],
            "daily": midnight,
            "weekly": [("weekday", [1])] + midnight,
            "monthly": firstOfMonth,
            "yearly": yearly, "annually": yearly, "anually": yearly,
            "quarterly": [("month", [1, 4, 7, 10])] + firstOfMonth,
            "semiannually": [("month", [1, 7])] + firstOfMonth, "semi-annually": [("month", [1, 7])] + firstOfMonth,
            "biannually": [("month", [1, 7])] + firstOfMonth, "bi-annually": [("month", [1, 7])] + firstOfMonth,
        ]
    }()

    mutating func applyShorthand(_ fields: [(field: String, values: [Int])]) {
        for (field, values) in fields {
            let chain = values.map { Located(component: CalendarComponent(start: $0, stop: -1, repeat: 0), offset: 0) }
            switch field {
            case "weekday": weekdays = values[0]
            case "month": month = chain
            case "day": day = chain
            case "hour": hour = chain
            case "minute": minute = chain
            default: microsecond = chain
            }
        }
    }

    // MARK: Weekdays

    static let weekdayNames: [(name: String, number: Int)] = [
        ("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2), ("thursday", 3),
        ("thu", 3), ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5), ("sunday", 6), ("sun", 6),
    ]

    func weekday(at offset: Int) -> (number: Int, length: Int)? {
        for (name, number) in Self.weekdayNames {
            let length = name.utf8.count
            guard offset + length <= end else { continue }
            if zip(bytes[offset..<(offset + length)], name.utf8).allSatisfy({ $0 | 0x20 == $1 }) {
                return (number, length)
            }
        }
        return nil
    }

    /// systemd's `parse_weekdays`: nothing if the text does not start with one.
    mutating func parseWeekdays() throws(ScheduleParseError) {
        var rangeStart = -1
        var first = true
        while true {
            guard let (number, length) = weekday(at: index) else {
                if first { return }
                throw fail(.syntax, "weekday", at: index, "expected a weekday name (Mon … Sun) after \",\" or \"..\"")
            }
            let after = byte(index + length)
            guard [0, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: " ")].contains(after) else {
                throw fail(
                    .syntax, "weekday", at: index + length,
                    "expected \",\", \"..\" or a space after the weekday")
            }
            weekdays |= 1 << number
            if rangeStart >= 0 {
                if rangeStart > number {
                    throw fail(
                        .outOfRange, "weekday", at: index, "the range ends before it starts (Mon..Sun is the order)")
                }
                for between in (rangeStart + 1)..<max(rangeStart + 1, number) { weekdays |= 1 << between }
            }
            index += length
            if index >= end { return }
            if current == UInt8(ascii: " ") {
                skipSpaces()
                return
            }
            if current == UInt8(ascii: ".") {
                guard rangeStart < 0, byte(index + 1) == UInt8(ascii: ".") else {
                    throw fail(
                        .syntax, "weekday", at: index,
                        rangeStart >= 0
                            ? "a range cannot continue a range"
                            : "write a range of weekdays with \"..\" (Mon..Fri)")
                }
                rangeStart = number
                index += 2
            } else if current == UInt8(ascii: "-") {
                guard rangeStart < 0 else {
                    throw fail(.syntax, "weekday", at: index, "a range cannot continue a range")
                }
                rangeStart = number
                index += 1
            } else if current == UInt8(ascii: ",") {
                rangeStart = -1
                index += 1
            }
            if index >= end || current == UInt8(ascii: " ") {
                skipSpaces()
                if rangeStart >= 0 { throw fail(.syntax, "weekday", at: index, "the range of weekdays has no end") }
                return
            }
            first = false
        }
    }

    // MARK: Date and time

    /// systemd's `parse_date`; true for `@SECONDS`, after which nothing may follow.
    mutating func parseDate() throws(ScheduleParseError) -> Bool {
        if index >= end { return false }
        if current == UInt8(ascii: "@") {
            try parseTimestamp()
            return true
        }
        let dateStart = index
        let first = try parseChain("date", seconds: false)
        if index >= end || current == UInt8(ascii: ":") {
            index = dateStart  // a time, not a date
            return false
        }
        try expectDateSeparator(after: "the first part of the date")
        let second = try parseChain("date", seconds: false)
        if index >= end || current == UInt8(ascii: " ") {
            skipSpaces()
            (month, day) = (first, second)
            return false
        }
        if endOfMonth {
            throw fail(.syntax, "date", at: index, "~ (days from the month's end) goes between month and day: *-02~01")
        }
        try expectDateSeparator(after: "the month")
        let third = try parseChain("day", seconds: false)
        guard index >= end || current == UInt8(ascii: " ") else {
            throw unexpected("day", "a space and a time, or the end")
        }
        skipSpaces()
        (year, month, day) = (first, second, third)
        return false
    }

    mutating func expectDateSeparator(after what: String) throws(ScheduleParseError) {
        if current == UInt8(ascii: "~") {
            endOfMonth = true
        } else if current != UInt8(ascii: "-") {
            throw unexpected("date", "\"-\" or \"~\" (a date) or \":\" (a time) after \(what)")
        }
        index += 1
    }

    /// systemd's `parse_calendar_time`.
    mutating func parseTime() throws(ScheduleParseError) {
        let zero = [Located(component: CalendarComponent(start: 0, stop: -1, repeat: 0), offset: index)]
        guard index < end else {
            (hour, minute, microsecond) = (zero, zero, zero)
            return
        }
        hour = try parseChain("hour", seconds: false)
        guard current == UInt8(ascii: ":") else { throw unexpected("hour", "\":\" and the minutes") }
        index += 1
        minute = try parseChain("minute", seconds: false)
        guard index < end else {
            microsecond = zero
            return
        }
        guard current == UInt8(ascii: ":") else { throw unexpected("minute", "\":\" and the seconds, or the end") }
        index += 1
        microsecond = try parseChain("second", seconds: true)
        guard index >= end else { throw unexpected("second", "the end of the time") }
    }

    /// `@SECONDS`: one instant, in UTC.
    mutating func parseTimestamp() throws(ScheduleParseError) {
        index += 1
        let start = index
        guard current.isDigit else { throw fail(.syntax, "date", at: index, "expected seconds since 1970 after @") }
        var seconds: Int64 = 0
        while current.isDigit {
            seconds = seconds * 10 + Int64(current - UInt8(ascii: "0"))
            guard seconds < 253_402_300_800 else { throw fail(.outOfRange, "date", at: start, "the time is too late") }
            index += 1
        }
        guard index >= end else { throw unexpected("date", "the end after @SECONDS") }
        let wall = WallTime(localSeconds: seconds)
        func constant(_ value: Int) -> [Located] {
            [Located(component: CalendarComponent(start: value, stop: -1, repeat: 0), offset: start)]
        }
        utc = true
        zone = TimeZone(identifier: "UTC")
        zoneName = nil
        (year, month, day) = (constant(wall.year), constant(wall.month), constant(wall.day))
        (hour, minute, microsecond) = (
            constant(wall.hour), constant(wall.minute), constant(wall.second * Self.usecPerSecond)
        )
    }

    func unexpected(_ field: String, _ expected: String) -> ScheduleParseError {
        guard index < end else { return fail(.syntax, field, at: index, "the expression ends; expected \(expected)") }
        if bytes[index] == UInt8(ascii: "/"), index > 0, bytes[index - 1] == UInt8(ascii: "*") {
            return fail(.syntax, field, at: index, "a repetition needs a start value: write 0/15, not */15")
        }
        let character = String(decoding: bytes[index..<min(end, index + 1)], as: UTF8.self)
        let shown = character.utf8.first.map { $0 < 0x80 } == true ? "\"\(character)\"" : "a non-ASCII character"
        return fail(.syntax, field, at: index, "unexpected \(shown); expected \(expected)")
    }

    static func scalarOffset(_ utf8Offset: Int, in text: String) -> Int {
        ScheduleParseError(.syntax, .calendar, text, field: "", utf8Offset: utf8Offset, "").column
    }
}
