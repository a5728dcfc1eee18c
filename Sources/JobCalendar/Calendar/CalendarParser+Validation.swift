extension CalendarParser {
    /// systemd's `calendar_spec_normalize` then `calendar_spec_valid`, with
    /// an error naming the field and the component that can never fire.
    mutating func finish() throws(ScheduleParseError) -> CalendarEvent {
        if zoneName == "UTC" {
            utc = true
            zoneName = nil
        }
        if weekdays <= 0 || weekdays >= CalendarEvent.allWeekdays { weekdays = -1 }
        if endOfMonth && day == nil { endOfMonth = false }
        year = year.map { chain in
            chain.map { located in
                var located = located
                located.component.start = Self.fullYear(located.component.start)
                located.component.stop = Self.fullYear(located.component.stop)
                return located
            }
        }
        let usec = Self.usecPerSecond
        let checks: [(field: String, chain: [Located]?, from: Int, to: Int, endOfMonth: Bool)] = [
            ("year", year, 1970, 2199, false), ("month", month, 1, 12, false), ("day", day, 1, 31, endOfMonth),
            ("hour", hour, 0, 23, false), ("minute", minute, 0, 59, false),
            ("second", microsecond, 0, 60 * usec - 1, false),
        ]
        var chains: [[CalendarComponent]?] = []
        var seconds: [Located] = []
        for check in checks {
            guard let chain = check.chain else {
                chains.append(nil)
                continue
            }
            var components: [CalendarComponent] = []
            for located in chain {
                let component = Self.normalized(located.component)
                try validate(
                    component, at: located.offset, field: check.field, from: check.from, to: check.to,
                    endOfMonth: check.endOfMonth)
                components.append(component)
                if check.field == "second" { seconds.append(Located(component: component, offset: located.offset)) }
            }
            // Sorted and without duplicates, as systemd keeps them: the
            // order decides the order of its mktime calls for `~` days.
            chains.append(Array(Set(components)).sorted())
        }
        if let minimumSpacing { try checkSpacing(seconds, minimum: minimumSpacing) }
        return CalendarEvent(
            text: text, weekdays: weekdays, year: chains[0], month: chains[1], day: chains[2], hour: chains[3],
            minute: chains[4], microsecond: chains[5], endOfMonth: endOfMonth, utc: utc,
            timeZoneName: zoneName, timeZone: zone)
    }

    /// systemd's `fix_year`: 0–69 are 2000–2069, 70–99 are 1970–1999.
    static func fullYear(_ value: Int) -> Int {
        switch value {
        case 0..<70: value + 2000
        case 70..<100: value + 1900
        default: value
        }
    }

    /// The per-component part of systemd's `normalize_chain`.
    static func normalized(_ component: CalendarComponent) -> CalendarComponent {
        var component = component
        if component.stop > component.start && component.repeat > 0 {
            component.stop -= (component.stop - component.start) % component.repeat
        }
        if (component.stop > component.start && component.repeat > 0
            && component.start + component.repeat > component.stop) || component.start == component.stop
        {
            component.repeat = 0
            component.stop = -1
        }
        return component
    }

    /// systemd's `chain_valid` for one component.
    func validate(
        _ component: CalendarComponent, at offset: Int, field: String, from: Int, to fieldEnd: Int,
        endOfMonth: Bool
    ) throws(ScheduleParseError) {
        let to = endOfMonth ? fieldEnd - 3 : fieldEnd
        let seconds = field == "second"
        func shown(_ value: Int) -> String { seconds ? Self.secondsText(value) : String(value) }
        let range = "\(shown(from))–\(shown(to))"
        func failure(_ reason: String) -> ScheduleParseError { fail(.outOfRange, field, at: offset, reason) }
        if component.start < from || component.start > to {
            if endOfMonth {
                throw failure("a day counted from the month's end (~) must be \(range), not \(component.start)")
            }
            throw failure("\(shown(component.start)) is out of range \(range)")
        }
        if component.repeat > to - from {
            throw failure("the repetition /\(shown(component.repeat)) is longer than the range \(range)")
        }
        if component.stop >= 0 {
            if component.stop < from || component.stop > to {
                throw failure("the range ends at \(shown(component.stop)), out of range \(range)")
            }
            if component.start + component.repeat > component.stop {
                throw failure("the range \(shown(component.start))..\(shown(component.stop)) ends before it starts")
            }
        } else if endOfMonth && component.start - component.repeat < from {
            throw failure("~\(component.start)/\(component.repeat) repeats past the month's end")
        } else if !endOfMonth && component.repeat > 0 && component.start + component.repeat > to {
            throw failure("\(shown(component.start))/\(shown(component.repeat)) never repeats within \(range)")
        }
    }

    /// Microseconds as seconds: `5`, `0.5`, `59.999999`.
    static func secondsText(_ microseconds: Int) -> String {
        let whole = microseconds / usecPerSecond
        let fraction = microseconds % usecPerSecond
        guard fraction > 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }
}
