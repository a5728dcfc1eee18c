extension CalendarParser {
    /// systemd's `parse_chain`: `*` (nil, or every second for seconds) or
    /// a comma-separated list of components.
    mutating func parseChain(_ field: String, seconds: Bool) throws(ScheduleParseError) -> [Located]? {
        if current == UInt8(ascii: "*") {
            let offset = index
            index += 1
            return seconds
                ? [
                    Located(
                        component: CalendarComponent(start: 0, stop: -1, repeat: Self.usecPerSecond),
                        offset: offset)
                ] : nil
        }
        var chain: [Located] = []
        while true {
            guard chain.count <= Self.maxComponents else {
                throw fail(.outOfRange, field, at: index, "more than \(Self.maxComponents) items in one list")
            }
            let offset = index
            let start = try parseDecimal(field, seconds: seconds)
            var stop = -1
            var repetition = 0
            if current == UInt8(ascii: "."), byte(index + 1) == UInt8(ascii: ".") {
                index += 2
                stop = try parseDecimal(field, seconds: seconds)
                repetition = seconds ? Self.usecPerSecond : 1
            }
            if current == UInt8(ascii: "/") {
                index += 1
                let repetitionOffset = index
                repetition = try parseDecimal(field, seconds: seconds)
                if repetition == 0 {
                    throw fail(.outOfRange, field, at: repetitionOffset, "a repetition must be longer than 0")
                }
            } else if seconds && stop >= 0 && start + repetition > stop {
                throw fail(
                    .outOfRange, field, at: offset,
                    "a range of seconds shorter than a second needs a repetition (1..1.5/0.25)")
            }
            guard
                [
                    0, UInt8(ascii: " "), UInt8(ascii: ","), UInt8(ascii: "-"), UInt8(ascii: "~"),
                    UInt8(ascii: ":"),
                ].contains(current)
            else {
                throw unexpected(field, "\",\", \"..\", \"/\" or the next field")
            }
            chain.append(
                Located(
                    component: CalendarComponent(start: start, stop: stop, repeat: repetition),
                    offset: offset))
            guard current == UInt8(ascii: ",") else { return chain }
            index += 1
        }
    }

    /// systemd's `parse_component_decimal`: digits; for seconds, up to six
    /// decimals (a seventh rounds), in microseconds.
    mutating func parseDecimal(_ field: String, seconds: Bool) throws(ScheduleParseError) -> Int {
        let start = index
        guard current.isDigit else {
            throw unexpected(field, seconds ? "a number of seconds or *" : "a number or *")
        }
        let tooLarge = fail(.outOfRange, field, at: start, "the number is too large")
        var value = 0
        while current.isDigit {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(current - UInt8(ascii: "0")))
            if overflow1 || overflow2 { throw tooLarge }
            value = sum
            index += 1
        }
        if seconds {
            let (scaled, overflow) = value.multipliedReportingOverflow(by: Self.usecPerSecond)
            if overflow { throw tooLarge }
            value = scaled
            if current == UInt8(ascii: "."), byte(index + 1) != UInt8(ascii: ".") {
                index += 1
                guard current.isDigit else { throw unexpected(field, "decimals after \".\"") }
                var fraction = 0
                for _ in 0..<6 {
                    fraction *= 10
                    if current.isDigit {
                        fraction += Int(current - UInt8(ascii: "0"))
                        index += 1
                    }
                }
                if current >= UInt8(ascii: "5") && current <= UInt8(ascii: "9") { fraction += 1 }
                while current.isDigit { index += 1 }
                value += fraction
            }
        }
        guard value <= Int(Int32.max) else { throw tooLarge }
        return value
    }
}
