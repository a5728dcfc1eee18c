import Foundation

extension CalendarEvent {
    /// The first elapse strictly after `date`, as `systemd-analyze calendar`
    /// computes it: in the expression's own zone if it names one, else in
    /// `zone`. Nil when it never elapses again (it never does after 2199).
    public func next(after date: Date, in zone: TimeZone) -> Date? {
        guard case .elapses(let micros) = nextElapse(after: Instant.micros(date), in: zone) else { return nil }
        return Instant.date(micros: micros)
    }

    /// The zone the search runs in: the expression's, else `defaultZone`.
    func rules(default defaultZone: TimeZone) -> ZoneRules {
        if utc { return .utc }
        return ZoneRules(timeZone ?? defaultZone)
    }

    /// What systemd's `calendar_spec_next_usec` returns.
    enum Elapse: Equatable {
        case elapses(Int64)
        /// `-ENOENT`: no later elapse (`Next elapse: never`).
        case never
        /// systemd gave up after 1,000 rounds (`-EDEADLK`); jobd treats it as never.
        case stuck
    }

    static let maxYear = 2199
    static let maxIterations = 1000
    static let usecPerSecond = 1_000_000

    /// systemd's `calendar_spec_next_usec_impl` (microseconds since the epoch).
    func nextElapse(after usec: Int64, in defaultZone: TimeZone) -> Elapse {
        let start = usec + 1
        var clock = LocalClock(rules: rules(default: defaultZone))
        let seconds = CivilDate.floorDivide(start, Int64(Self.usecPerSecond))
        var tm = clock.localTime(seconds)
        var tmUsec = Int(start - seconds * Int64(Self.usecPerSecond))
        // glibc's offset guess as the first mktime of the search leaves it.
        clock.offsetGuess = seconds - tm.localSeconds
        let found = findNext(&tm, &tmUsec, &clock)
        guard found == nil else { return found ?? .never }
        guard let t = clock.makeTime(&tm) else { return .never }
        return .elapses(t * Int64(Self.usecPerSecond) + Int64(tmUsec))
    }

    /// systemd's `find_next`: nil when `tm` and `tmUsec` hold the elapse.
    private func findNext(_ tm: inout BrokenDownTime, _ tmUsec: inout Int, _ clock: inout LocalClock) -> Elapse? {
        var c = tm
        var usec = tmUsec
        let dst = -1
        // Set once the search finds a time not after its start (systemd's
        // fix for zones whose DST flag is inverted, in 252.38): from then on
        // mktime's own tm_isdst is kept.
        var invalidateDST = false
        func resetBelowDay() { (c.hour, c.minute, c.second, usec) = (0, 0, 0, 0) }
        for _ in 0..<Self.maxIterations {
            _ = clock.makeTime(&c)
            if !invalidateDST { c.isDST = dst }

            var r: Int
            (r, c.year) = findMatching(year, c.year, c, &clock)
            if r > 0 {
                (c.month, c.day) = (0, 1)
                resetBelowDay()
            }
            if r < 0 { return .never }
            if withinBounds(&c, &clock) <= 0 { return .never }

            (r, c.month) = findMatching(month, c.month + 1, c, &clock)
            c.month -= 1
            if r > 0 {
                c.day = 1
                resetBelowDay()
            }
            if r >= 0 { r = withinBounds(&c, &clock) }
            if r < 0 {
                (c.year, c.month, c.day) = (c.year + 1, 0, 1)
                resetBelowDay()
                continue
            }
            if r == 0 { continue }

            (r, c.day) = findMatching(day, c.day, c, &clock, isDayChain: true)
            if r > 0 { resetBelowDay() }
            if r >= 0 { r = withinBounds(&c, &clock) }
            if r < 0 {
                (c.month, c.day) = (c.month + 1, 1)
                resetBelowDay()
                continue
            }
            if r == 0 { continue }

            if !matchesWeekday(c, &clock) {
                c.day += 1
                resetBelowDay()
                continue
            }

            (r, c.hour) = findMatching(hour, c.hour, c, &clock)
            if r > 0 { (c.minute, c.second, usec) = (0, 0, 0) }
            if r >= 0 { r = withinBounds(&c, &clock) }
            if r < 0 {
                c.day += 1
                resetBelowDay()
                continue
            }
            // The hour set may not exist (a clock change): start again from the normalised time.
            if r == 0 { continue }

            (r, c.minute) = findMatching(minute, c.minute, c, &clock)
            if r > 0 { (c.second, usec) = (0, 0) }
            if r >= 0 { r = withinBounds(&c, &clock) }
            if r < 0 {
                (c.hour, c.minute, c.second, usec) = (c.hour + 1, 0, 0, 0)
                continue
            }
            if r == 0 { continue }

            var value = c.second * Self.usecPerSecond + usec
            (r, value) = findMatching(microsecond, value, c, &clock)
            usec = value % Self.usecPerSecond
            c.second = value / Self.usecPerSecond
            if r >= 0 { r = withinBounds(&c, &clock) }
            if r < 0 {
                (c.minute, c.second, usec) = (c.minute + 1, 0, 0)
                continue
            }
            if r == 0 { continue }

            // Not after the start, as wall-clock fields: advance an hour and
            // let mktime pick the side of the clock change.
            var order = Self.compareFields(tm, c)
            if order == 0 { order = tmUsec < usec + 1 ? -1 : (tmUsec > usec + 1 ? 1 : 0) }
            if order >= 0 {
                invalidateDST = true
                c.hour += 1
                continue
            }

            tm = c
            tmUsec = usec
            return nil
        }
        return .stuck
    }

    /// systemd's `tm_compare`: year, month, day, hour, minute, second.
    private static func compareFields(_ a: BrokenDownTime, _ b: BrokenDownTime) -> Int {
        let left = [a.year, a.month, a.day, a.hour, a.minute, a.second]
        let right = [b.year, b.month, b.day, b.hour, b.minute, b.second]
        for (x, y) in zip(left, right) where x != y { return x < y ? -1 : 1 }
        return 0
    }

    /// systemd's `find_matching_component`: the earliest value at or after
    /// `value` that a component allows, and 1 if it moved, 0 if not, -1 if
    /// there is none (`value` then stays).
    private func findMatching(
        _ chain: [CalendarComponent]?, _ value: Int, _ tm: BrokenDownTime,
        _ clock: inout LocalClock, isDayChain: Bool = false
    ) -> (Int, Int) {
        guard let chain else { return (0, value) }
        let fromEnd = endOfMonth && isDayChain
        var best: Int?
        for component in chain {
            var start = component.start
            var stop = component.stop
            if fromEnd {
                start = endOfMonthDay(tm, component.start, &clock)
                stop = endOfMonthDay(tm, component.stop, &clock)
                if stop > 0 { swap(&start, &stop) }
            }
            if start >= value {
                if best.map({ start < $0 }) ?? true { best = start }
            } else if component.repeat > 0 {
                let k = start + component.repeat * ((value - start + component.repeat - 1) / component.repeat)
                if (best.map { k < $0 } ?? true) && (stop < 0 || k <= stop) { best = k }
            }
        }
        guard let best else { return (-1, value) }
        return (value != best ? 1 : 0, best)
    }

    /// systemd's `find_end_of_month`: the day `day` days before the next
    /// month's first (1 is the last day), or -1 outside the month.
    private func endOfMonthDay(_ tm: BrokenDownTime, _ day: Int, _ clock: inout LocalClock) -> Int {
        var t = tm
        t.month += 1
        t.day = 1 - day
        guard clock.makeTime(&t) != nil, t.month == tm.month else { return -1 }
        return t.day
    }

    /// systemd's `tm_within_bounds`: 1 if `tm` is a real time as it is; 0
    /// if mktime moved it forward (`tm` takes the normalised time, lower
    /// fields reset); -1 if it is past 2199, or mktime fails or moves back.
    private func withinBounds(_ tm: inout BrokenDownTime, _ clock: inout LocalClock) -> Int {
        if tm.year > Self.maxYear { return -1 }
        var t = tm
        guard clock.makeTime(&t) != nil else { return -1 }
        var comparison: Int
        func compare(_ a: Int, _ b: Int) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
        comparison = compare(t.year, tm.year)
        if comparison != 0 {
            t.month = 0
        } else {
            comparison = compare(t.month, tm.month)
            if comparison != 0 {
                t.day = 1
            } else {
                comparison = compare(t.day, tm.day)
                if comparison != 0 {
                    t.hour = 0
                } else {
                    comparison = compare(t.hour, tm.hour)
                    if comparison != 0 {
                        t.minute = 0
                    } else {
                        comparison = compare(t.minute, tm.minute)
                        if comparison != 0 { t.second = 0 } else { comparison = compare(t.second, tm.second) }
                    }
                }
            }
        }
        if comparison < 0 { return -1 }
        if comparison > 0 { tm = t }
        return comparison == 0 ? 1 : 0
    }

    /// systemd's `matches_weekday`.
    private func matchesWeekday(_ tm: BrokenDownTime, _ clock: inout LocalClock) -> Bool {
        if weekdays < 0 || weekdays >= Self.allWeekdays { return true }
        var t = tm
        guard clock.makeTime(&t) != nil else { return false }
        let monday0 = t.weekday == 0 ? 6 : t.weekday - 1
        return weekdays & (1 << monday0) != 0
    }
}
