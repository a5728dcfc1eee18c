import JobValues

/// `every:` — a fixed interval, firing at its multiples since the Unix
/// epoch (1970-01-01T00:00:00Z), so every host computes the same times
/// whatever its zone and whenever it started.
enum EveryInterval {
    /// Parses a jobd duration (`15m`, `1h30m`, `90s`, `1d`, `1500ms`) of at
    /// least 1s; the duration grammar is JobValues' (`Duration(parsing:)`).
    static func parse(_ text: String) throws(ScheduleParseError) -> Duration {
        let duration: Duration
        do {
            duration = try Duration(parsing: text)
        } catch {
            let code: ScheduleParseError.Code =
                switch error.code {
                case .empty: .empty
                case .overflow: .outOfRange
                case .unknownUnit: .unknownName
                default: .syntax
                }
            throw ScheduleParseError(code, .every, text, field: "duration", utf8Offset: 0, error.reason)
        }
        guard duration >= ScheduleExpression.minimumSpacing else {
            throw ScheduleParseError(
                .outOfRange, .every, text, field: "duration", utf8Offset: 0, "an interval must be at least 1s")
        }
        return duration
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
