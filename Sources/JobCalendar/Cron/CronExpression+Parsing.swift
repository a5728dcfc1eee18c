extension CronExpression {
    /// Parses `text` (see the type's documentation for the grammar).
    ///
    ///     try CronExpression(parsing: "*/15 9-17 * * mon-fri")
    ///     try CronExpression(parsing: "61 * * * *")  // throws: minute: 61 is out of range 0–59
    public init(parsing text: String) throws(ScheduleParseError) {
        let bytes = Array(text.utf8)
        func fail(
            _ code: ScheduleParseError.Code, _ field: String, at offset: Int, _ reason: String
        )
            -> ScheduleParseError
        {
            ScheduleParseError(code, .cron, text, field: field, utf8Offset: offset, reason)
        }
        var start = 0
        var end = bytes.count
        while start < end, Self.isBlank(bytes[start]) { start += 1 }
        while end > start, Self.isBlank(bytes[end - 1]) { end -= 1 }
        guard start < end else {
            throw fail(.empty, "expression", at: 0, "it is empty; write five fields, e.g. */15 * * * *")
        }

        var fields: [(text: [UInt8], offset: Int)] = []
        if bytes[start] == UInt8(ascii: "@") {
            let word = String(decoding: bytes[start..<end], as: UTF8.self).lowercased()
            guard let expansion = Self.shorthands[word] else {
                let known = Self.shorthands.keys.sorted().joined(separator: " ")
                throw fail(.unknownName, "expression", at: start, "unknown shorthand \(word); known: \(known)")
            }
            // Errors cannot arise in an expansion: every field points at the shorthand.
            fields = expansion.split(separator: " ").map { (Array($0.utf8), start) }
        } else {
            var index = start
            while index < end {
                let fieldStart = index
                while index < end, !Self.isBlank(bytes[index]) { index += 1 }
                fields.append((Array(bytes[fieldStart..<index]), fieldStart))
                while index < end, Self.isBlank(bytes[index]) { index += 1 }
            }
        }
        if fields.count != 5, let (offset, scalar) = Self.unusualSpace(in: text) {
            throw fail(
                .syntax, "expression", at: offset,
                "a non-ASCII space (U+\(String(scalar.value, radix: 16, uppercase: true))) is not a field "
                    + "separator; separate the fields with plain spaces or tabs")
        }
        guard fields.count == 5 else {
            let offset = fields.count > 5 ? fields[5].offset : end
            let hint = fields.count == 6 ? " (a seconds or years field is not supported)" : ""
            throw fail(
                .syntax, "expression", at: offset,
                "a cron expression has five fields (minute hour day-of-month month day-of-week), "
                    + "not \(fields.count)\(hint)")
        }

        var sets: [CronFieldSet] = []
        for (spec, field) in zip(CronField.all, fields) {
            do {
                sets.append(try spec.parse(field.text))
            } catch {
                throw fail(error.code, spec.name, at: field.offset + error.offset, error.reason)
            }
        }
        let (dayOfMonth, dayOfWeek) = (sets[2], sets[4])
        // croniter's reading: a field covering every value is unrestricted
        // only when the other day field's text holds a `*`.
        let star = UInt8(ascii: "*")
        let dayOfMonthFree =
            dayOfMonth.hasBareStar
            || (dayOfMonth.bits == CronField.dayOfMonth.allBits
                && fields[4].text.contains(star))
        let dayOfWeekFree =
            dayOfWeek.hasBareStar
            || (dayOfWeek.bits == CronField.dayOfWeek.allBits
                && fields[2].text.contains(star))
        self.init(
            text: text, minutes: sets[0].bits, hours: UInt32(sets[1].bits), daysOfMonth: UInt32(sets[2].bits),
            months: UInt16(sets[3].bits), weekdays: UInt8(sets[4].bits),
            eitherDayMatches: !dayOfMonthFree && !dayOfWeekFree)
    }

    static let shorthands: [String: String] = [
        "@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
        "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
    ]

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}

/// The values one field allows.
struct CronFieldSet {
    var bits: UInt64
    /// A bare `*` among its items (croniter then treats the field as unrestricted).
    var hasBareStar: Bool
}

/// A failure inside one field: the offset is relative to the field's start.
struct CronFieldError: Error {
    var code: ScheduleParseError.Code
    var offset: Int
    var reason: String
}

/// One of the five fields: its range and names.
struct CronField: Sendable {
    var name: String
    var low: Int
    var high: Int
    /// Where `*/n` and `a/n` end (croniter's range end; for weekdays 6, as 7 is Sunday again).
    var stepEnd: Int
    var names: [String]
    /// The first name's value.
    var firstNameValue: Int

    static let minute = CronField(name: "minute", low: 0, high: 59, stepEnd: 59, names: [], firstNameValue: 0)
    static let hour = CronField(name: "hour", low: 0, high: 23, stepEnd: 23, names: [], firstNameValue: 0)
    static let dayOfMonth = CronField(name: "day-of-month", low: 1, high: 31, stepEnd: 31, names: [], firstNameValue: 1)
    static let month = CronField(
        name: "month", low: 1, high: 12, stepEnd: 12,
        names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], firstNameValue: 1)
    static let dayOfWeek = CronField(
        name: "day-of-week", low: 0, high: 7, stepEnd: 6,
        names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"], firstNameValue: 0)
    static let all = [minute, hour, dayOfMonth, month, dayOfWeek]

    var isWeekday: Bool { high == 7 }

    /// Every value of the field, as bits (weekdays: 0…6).
    var allBits: UInt64 { bits(from: low, through: min(high, stepEnd), step: 1) }

    func bits(from first: Int, through last: Int, step: Int) -> UInt64 {
        var bits: UInt64 = 0
        var value = first
        while value <= last {
            bits |= 1 << UInt64(isWeekday && value == 7 ? 0 : value)
            value += step
        }
        return bits
    }

    func parse(_ text: [UInt8]) throws(CronFieldError) -> CronFieldSet {
        var set = CronFieldSet(bits: 0, hasBareStar: false)
        var itemStart = 0
        var items = 0
        while true {
            items += 1
            guard items <= ScheduleExpression.maxListItems else {
                throw CronFieldError(
                    code: .outOfRange, offset: itemStart,
                    reason: "more than \(ScheduleExpression.maxListItems) items in one list")
            }
            var itemEnd = itemStart
            while itemEnd < text.count, text[itemEnd] != UInt8(ascii: ",") { itemEnd += 1 }
            guard itemEnd > itemStart else {
                throw CronFieldError(code: .syntax, offset: itemStart, reason: "an empty item in a list")
            }
            let item = try parseItem(text, itemStart..<itemEnd)
            set.bits |= item.bits
            set.hasBareStar = set.hasBareStar || item.hasBareStar
            guard itemEnd < text.count else { return set }
            itemStart = itemEnd + 1
        }
    }

    /// `*`, `*/n`, `a`, `a/n`, `a-b`, `a-b/n`.
    private func parseItem(_ text: [UInt8], _ range: Range<Int>) throws(CronFieldError) -> CronFieldSet {
        var index = range.lowerBound
        var step = 1
        var first: Int
        var last: Int
        var isStar = false
        if text[index] == UInt8(ascii: "*") {
            isStar = true
            first = low
            last = stepEnd
            index += 1
        } else {
            first = try value(text, &index, range.upperBound, atEnd: false)
            last = first
            if index < range.upperBound, text[index] == UInt8(ascii: "-") {
                let rangeStart = index + 1
                index += 1
                last = try value(text, &index, range.upperBound, atEnd: true)
                if first == last {
                    throw CronFieldError(
                        code: .outOfRange, offset: range.lowerBound,
                        reason: "the range \(first)-\(last) has one value; write \(first)")
                }
                if first > last {
                    let hint = isWeekday ? " (Sunday at the end is 7: fri-sun, 5-7)" : ""
                    throw CronFieldError(
                        code: .outOfRange, offset: rangeStart,
                        reason: "the range ends at \(last), before its start \(first)\(hint)")
                }
            } else if index < range.upperBound, text[index] == UInt8(ascii: "/") {
                // croniter reads `a/n` as `a-END/n`, and `END-END/n` as the
                // whole field: refused rather than read either way.
                if first == stepEnd {
                    throw CronFieldError(
                        code: .outOfRange, offset: range.lowerBound,
                        reason: "\(first)/n starts at the field's last value, so it never repeats; "
                            + "write \(first)")
                }
                last = stepEnd
            }
        }
        let hasStep = index < range.upperBound && text[index] == UInt8(ascii: "/")
        if hasStep {
            index += 1
            let stepStart = index
            guard index < range.upperBound, text[index].isDigit else {
                throw CronFieldError(code: .syntax, offset: index, reason: "expected a step (a number) after /")
            }
            step = try number(text, &index, range.upperBound)
            guard step >= 1 else {
                throw CronFieldError(code: .outOfRange, offset: stepStart, reason: "a step must be 1 or more")
            }
        }
        guard index == range.upperBound else {
            throw unexpected(text, at: index, in: range)
        }
        let bits = bits(from: first, through: last, step: step)
        return CronFieldSet(bits: bits, hasBareStar: isStar && !hasStep)
    }

    /// A number or (months, weekdays) a name. `atEnd`: it ends a range, where
    /// a weekday named `sun` is 7.
    private func value(_ text: [UInt8], _ index: inout Int, _ end: Int, atEnd: Bool) throws(CronFieldError) -> Int {
        let start = index
        if index < end, text[index].isDigit {
            let value = try number(text, &index, end)
            guard value >= low, value <= high else {
                throw CronFieldError(
                    code: .outOfRange, offset: start,
                    reason: "\(value) is out of range \(low)–\(high)")
            }
            return isWeekday && value == 7 && !atEnd ? 0 : value
        }
        while index < end, text[index].isLetter { index += 1 }
        guard index > start else { throw unexpected(text, at: start, in: start..<end) }
        let word = String(decoding: text[start..<index], as: UTF8.self).lowercased()
        if let position = names.firstIndex(of: word) {
            let value = firstNameValue + position
            return isWeekday && value == 0 && atEnd ? 7 : value
        }
        if ["l", "w", "lw"].contains(word) {
            throw CronFieldError(
                code: .unsupported, offset: start,
                reason: "\(word.uppercased()) (last, nearest weekday) is not supported")
        }
        if word == "h" {
            throw CronFieldError(code: .unsupported, offset: start, reason: "H (hashed values) is not supported")
        }
        if names.isEmpty {
            throw CronFieldError(code: .syntax, offset: start, reason: "\(name) takes numbers, not \"\(word)\"")
        }
        throw CronFieldError(
            code: .unknownName, offset: start,
            reason: "unknown name \"\(word)\"; write one of \(names.joined(separator: " "))")
    }

    private func number(_ text: [UInt8], _ index: inout Int, _ end: Int) throws(CronFieldError) -> Int {
        let start = index
        var value = 0
        while index < end, text[index].isDigit {
            value = value * 10 + Int(text[index] - UInt8(ascii: "0"))
            if value > 1_000_000 {
                throw CronFieldError(code: .outOfRange, offset: start, reason: "the number is too large")
            }
            index += 1
        }
        return value
    }

    private func unexpected(_ text: [UInt8], at index: Int, in range: Range<Int>) -> CronFieldError {
        guard index < range.upperBound else {
            return CronFieldError(code: .syntax, offset: index, reason: "the item ends; expected a value")
        }
        let rest = String(decoding: text[index..<range.upperBound], as: UTF8.self)
        let character = text[index]
        switch character {
        case UInt8(ascii: "?"):
            return CronFieldError(code: .unsupported, offset: index, reason: "? is not supported; write *")
        case UInt8(ascii: "#"):
            return CronFieldError(
                code: .unsupported, offset: index,
                reason: "# (the nth weekday of the month) is not supported")
        case UInt8(ascii: "L"), UInt8(ascii: "l"), UInt8(ascii: "W"), UInt8(ascii: "w"):
            return CronFieldError(
                code: .unsupported, offset: index,
                reason: "\(rest.uppercased()) (last, nearest weekday) is not supported")
        default:
            return CronFieldError(
                code: .syntax, offset: index,
                reason: "unexpected \"\(rest)\"; write *, a value, a-b, */n, a-b/n or a list of those")
        }
    }
}

extension UInt8 {
    var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isLetter: Bool { (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z") }
}

extension CronExpression {
    /// The UTF-8 offset and scalar of the first space-like character that
    /// is not ASCII (a no-break space pasted from a document), if any.
    static func unusualSpace(in text: String) -> (offset: Int, scalar: Unicode.Scalar)? {
        var offset = 0
        for scalar in text.unicodeScalars {
            if !scalar.isASCII, scalar.properties.isWhitespace || scalar.value == 0x200B { return (offset, scalar) }
            offset += UTF8.width(scalar)
        }
        return nil
    }
}
