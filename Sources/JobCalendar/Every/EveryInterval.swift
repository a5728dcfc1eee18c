/// `every:` — a fixed interval, firing at its multiples since the Unix
/// epoch (1970-01-01T00:00:00Z), so every host computes the same times
/// whatever its zone and whenever it started.
enum EveryInterval {
    static let minimumMilliseconds: Int64 = 1_000

    /// The units of jobd's durations, largest first, in milliseconds.
    static let units: [(name: String, milliseconds: Int64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1),
    ]

    /// Parses a jobd duration (`15m`, `1h30m`, `90s`, `1d`, `1500ms`):
    /// integers with units from largest to smallest, each once; at least 1s.
    static func parse(_ text: String) throws(ScheduleParseError) -> Duration {
        let bytes = Array(text.utf8)
        func fail(_ code: ScheduleParseError.Code, at offset: Int, _ reason: String) -> ScheduleParseError {
            ScheduleParseError(code, .every, text, field: "duration", utf8Offset: offset, reason)
        }
        let hint = "write an integer and a unit (s, m, h, d), e.g. 30s, 15m, 1h30m"
        var index = 0
        var end = bytes.count
        while index < end, bytes[index] == UInt8(ascii: " ") { index += 1 }
        while end > index, bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
        guard index < end else { throw fail(.empty, at: 0, "it is empty; \(hint)") }
        var total: Int64 = 0
        var lastUnit = -1
        while index < end {
            let numberStart = index
            var number: Int64 = 0
            while index < end, bytes[index].isDigit {
                let (times10, overflow1) = number.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
                if overflow1 || overflow2 { throw fail(.outOfRange, at: numberStart, "the number is too large") }
                number = sum
                index += 1
            }
            guard index > numberStart else {
                throw fail(.syntax, at: index, "expected a number; \(hint)")
            }
            let unitStart = index
            while index < end, bytes[index].isLetter { index += 1 }
            let unit = String(decoding: bytes[unitStart..<index], as: UTF8.self)
            guard !unit.isEmpty else {
                if index < end, bytes[index] == UInt8(ascii: ".") {
                    throw fail(.syntax, at: index, "fractions are not accepted; use a smaller unit (90s, not 1.5m)")
                }
                throw fail(.syntax, at: index, index < end ? "expected a unit; \(hint)" : "a duration needs a unit; \(hint)")
            }
            guard let unitIndex = units.firstIndex(where: { $0.name == unit }) else {
                throw fail(.unknownName, at: unitStart, "unknown unit \"\(unit)\"; \(hint)")
            }
            guard unitIndex > lastUnit else {
                throw fail(.syntax, at: unitStart, "units must go from largest to smallest, each once (1h30m)")
            }
            lastUnit = unitIndex
            let (part, overflow1) = number.multipliedReportingOverflow(by: units[unitIndex].milliseconds)
            let (sum, overflow2) = total.addingReportingOverflow(part)
            if overflow1 || overflow2 { throw fail(.outOfRange, at: numberStart, "the duration is too long") }
            total = sum
        }
        guard total >= minimumMilliseconds else {
            throw fail(.outOfRange, at: 0, "an interval must be at least 1s")
        }
        return .milliseconds(total)
    }

    /// The interval in microseconds; nil when it is not positive.
    static func micros(_ duration: Duration) -> Int64? {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow1) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (micros, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        guard !overflow1, !overflow2, micros > 0 else { return nil }
        return micros
    }

    /// The first multiple of `period` strictly after `after` (microseconds).
    static func next(after: Int64, period: Int64) -> Int64? {
        let (result, overflow) = (CivilDate.floorDivide(after, period) + 1).multipliedReportingOverflow(by: period)
        return overflow ? nil : result
    }

    /// The last multiple of `period` at or before `atOrBefore`.
    static func previous(atOrBefore: Int64, period: Int64) -> Int64 {
        CivilDate.floorDivide(atOrBefore, period) * period
    }
}
