/// Durations as jobd writes them: an integer followed by a unit, `250ms`,
/// `30s`, `5m`, `2h`, `1d`.
///
/// Compounds are accepted when their units strictly decrease, each at most
/// once: `1m30s`, `1h30m`, `2s500ms`, `1d12h`. So `30s1m` and `1m1m` are
/// rejected, as are fractions (`1.5s`: write `1500ms`), signs (`-5s`, `+5s`),
/// spaces inside (`5 s`), a bare number (`30`: units are never implied) and
/// totals beyond ``Duration/jobdMaximum`` (3650d, ten years).
/// Surrounding whitespace is ignored. `0s` is a valid duration; whether zero
/// makes sense is the caller's call.
extension Duration {
    /// The longest duration jobd reads anywhere — a timeout, a delay, a
    /// retention, a backoff: ten years. Longer ones are refused when they are
    /// read (`jobd --check`, `jobctl validate`, a `--delay`), so that every
    /// time jobd computes from one (now + delay, a timer's deadline) stays
    /// far inside what a `Date`, a timestamp's four-digit year and
    /// `DispatchTime` can hold.
    public static let jobdMaximum: Duration = .milliseconds(jobdMaximumMilliseconds)

    /// The units, largest first, with their length in milliseconds.
    package static let jobdUnits: [(name: String, milliseconds: Int64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1),
    ]

    /// Parses `text` (see the type's extension notes for the grammar).
    ///
    ///     try Duration(parsing: "1m30s")   // .seconds(90)
    ///     try Duration(parsing: "30")      // throws: a duration needs a unit
    public init(parsing text: some StringProtocol) throws(ValueParseError) {
        let input = String(text)
        func fail(_ code: ValueParseError.Code, _ reason: String) -> ValueParseError {
            ValueParseError(code: code, kind: "duration", input: input, reason: reason)
        }
        let hint = "write an integer and a unit (ms, s, m, h, d), e.g. 250ms, 30s, 5m, 1m30s"

        let body = Array(input.trimmingWhitespace.utf8)
        guard !body.isEmpty else { throw fail(.empty, "it is empty; \(hint)") }
        if body[0] == UInt8(ascii: "-") { throw fail(.negative, "durations cannot be negative") }

        var totalMilliseconds: Int64 = 0
        var lastUnitIndex = -1
        var index = 0
        while index < body.count {
            // The number.
            let numberStart = index
            var number: Int64 = 0
            var overflowed = false
            while index < body.count, let digit = body[index].asciiDigit {
                let (times10, o1) = number.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int64(digit))
                overflowed = overflowed || o1 || o2
                number = sum
                index += 1
            }
            if index == numberStart {
                throw fail(
                    .malformed, "expected a number at \"\(String(decoding: body[index...], as: UTF8.self))\"; \(hint)")
            }
            // The unit.
            let unitStart = index
            while index < body.count, body[index].isASCIILetter { index += 1 }
            let unit = String(decoding: body[unitStart..<index], as: UTF8.self)
            if unit.isEmpty {
                if index == body.count {
                    throw fail(.missingUnit, "a duration needs a unit; \(hint)")
                }
                let rest = String(decoding: body[index...], as: UTF8.self)
                if rest.hasPrefix(".") {
                    throw fail(.malformed, "fractions are not accepted; use a smaller unit (1500ms, not 1.5s)")
                }
                throw fail(.malformed, "unexpected \"\(rest)\"; \(hint)")
            }
            guard let unitIndex = Self.jobdUnits.firstIndex(where: { $0.name == unit }) else {
                throw fail(.unknownUnit, "unknown unit \"\(unit)\"; \(hint)")
            }
            guard unitIndex > lastUnitIndex else {
                throw fail(.malformed, "units must go from largest to smallest, each once (e.g. 1h30m, 1m30s)")
            }
            lastUnitIndex = unitIndex
            let (part, o3) = number.multipliedReportingOverflow(by: Self.jobdUnits[unitIndex].milliseconds)
            let (sum, o4) = totalMilliseconds.addingReportingOverflow(part)
            if overflowed || o3 || o4 || sum > Self.jobdMaximumMilliseconds {
                throw fail(.overflow, "it is too long (at most \(Self.jobdMaximum.jobdText), ten years)")
            }
            totalMilliseconds = sum
        }
        self = .milliseconds(totalMilliseconds)
    }

    public static let jobdMaximumMilliseconds: Int64 = 3650 * 86_400_000

    /// The duration in whole milliseconds, rounded down; nil if it does not
    /// fit an `Int64` (never for a parsed duration).
    public var wholeMilliseconds: Int64? {
        let (seconds, attoseconds) = components
        let (ms, o1) = seconds.multipliedReportingOverflow(by: 1_000)
        let (total, o2) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return o1 || o2 ? nil : total
    }

    /// The shortest text `Duration(parsing:)` reads back as the same
    /// duration (to the millisecond): `1m30s`, `250ms`, `0s`.
    public var jobdText: String {
        guard var rest = wholeMilliseconds, rest > 0 else { return "0s" }
        var text = ""
        for unit in Self.jobdUnits where rest >= unit.milliseconds {
            text += "\(rest / unit.milliseconds)\(unit.name)"
            rest %= unit.milliseconds
        }
        return text
    }
}

extension UInt8 {
    package var asciiDigit: UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) ? self - UInt8(ascii: "0") : nil
    }

    package var isASCIILetter: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }
}

extension StringProtocol {
    /// The text without leading and trailing Unicode white space.
    package var trimmingWhitespace: Substring {
        let scalars = String(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return Substring(scalars[first...last])
    }
}
