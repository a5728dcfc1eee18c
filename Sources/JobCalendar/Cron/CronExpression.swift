import Foundation

/// A five-field cron expression: `minute hour day-of-month month day-of-week`.
///
/// Each field is `*`, a value, a range `a-b`, a step `*/n`, `a-b/n` or
/// `a/n` (from `a` to the field's end), or a comma-separated list of those.
/// Months and weekdays may be named (`jan`…`dec`, `sun`…`sat`, any case);
/// 0 and 7 are Sunday. `@hourly @daily @midnight @weekly @monthly @yearly
/// @annually` stand for their usual expressions.
///
/// Fire times are croniter's (PyPI, `day_or=True`) in a zone without clock
/// changes, including its reading of the two day fields: when both are
/// restricted a day matching either fires (Vixie cron's rule). A field
/// counts as unrestricted when it holds a bare `*`, or when it covers every
/// value and the *other* day field's text contains a `*` (so `*/1` in
/// day-of-week beside a `*` day-of-month is unrestricted, but `0-6` beside
/// `1` is a restricted field that matches every day).
///
/// Clock changes: an expression picks wall-clock times in its zone. A wall
/// time shown twice (the overlap when clocks go back) fires once, at its
/// first occurrence; one that does not exist (the gap when clocks go
/// forward) fires at the instant the gap ends, and all the skipped times
/// that match fire there once.
public struct CronExpression: Sendable, Hashable, CustomStringConvertible {
    /// The expression as written.
    public let text: String

    /// Bit n set: minute n fires (0…59).
    let minutes: UInt64
    /// Bit n set: hour n (0…23).
    let hours: UInt32
    /// Bit n set: day of month n (1…31).
    let daysOfMonth: UInt32
    /// Bit n set: month n (1…12).
    let months: UInt16
    /// Bit n set: weekday n, 0 = Sunday (0…6).
    let weekdays: UInt8
    /// Both day fields restricted: a day matching either one fires.
    let eitherDayMatches: Bool

    init(
        text: String, minutes: UInt64, hours: UInt32, daysOfMonth: UInt32, months: UInt16, weekdays: UInt8,
        eitherDayMatches: Bool
    ) {
        self.text = text
        self.minutes = minutes
        self.hours = hours
        self.daysOfMonth = daysOfMonth
        self.months = months
        self.weekdays = weekdays
        self.eitherDayMatches = eitherDayMatches
    }

    public var description: String { text }

    /// The first fire time strictly after `date`, in `zone`; nil if none
    /// (an expression such as `0 0 30 2 *` never fires).
    public func next(after date: Date, in zone: TimeZone) -> Date? {
        ScheduleExpression.cron(self).next(after: date, in: zone)
    }

    /// Whether some day of some year matches (checked once, so that a
    /// search for an impossible date ends at once).
    var canFire: Bool {
        if eitherDayMatches || weekdays != Self.allWeekdays { return true }
        // Only the day of month counts: some chosen month must have a chosen day.
        for month in 1...12 where months & (1 << month) != 0 {
            let longest = month == 2 ? 29 : CivilDate.daysInMonth(year: 2001, month: month)
            if UInt64(daysOfMonth) & ((UInt64(1) << UInt64(longest + 1)) - 2) != 0 { return true }
        }
        return false
    }

    static let allWeekdays: UInt8 = 0x7F

    func matchesDay(_ days: Int64, day: Int) -> Bool {
        let byDate = daysOfMonth & (UInt32(1) << day) != 0
        let byWeekday = weekdays & (UInt8(1) << CivilDate.weekday(days: days)) != 0
        return eitherDayMatches ? byDate || byWeekday : byDate && byWeekday
    }

    /// The first fire time strictly after instant `after` (whole seconds).
    func nextSecond(after: Int64, in zone: ZoneRules) -> Int64? {
        guard canFire else { return nil }
        // Every wall time up to the one shown at `after` maps to an instant
        // at or before it (the mapping never goes back), so the search
        // starts one minute later. In the second pass of an overlap, the
        // next few matching wall times map to their first occurrence, which
        // is past: skip those.
        var start = CivilDate.floorDivide(zone.localSeconds(at: after), 60) * 60 + 60
        for _ in 0..<10_000 {
            guard let wall = nextWall(atOrAfter: start) else { return nil }
            let instant = zone.firstInstant(ofWall: wall)
            if instant > after { return instant }
            start = wall + 60
        }
        return nil
    }

    /// The first matching wall time (local seconds, whole minutes) at or
    /// after `start`, within a dozen years (enough for any expression that
    /// can fire: a 29 February comes within eight).
    func nextWall(atOrAfter start: Int64) -> Int64? {
        var wall = WallTime(localSeconds: start)
        let lastYear = min(wall.year + 12, 9999)
        while wall.year <= lastYear {
            if months & (1 << wall.month) == 0 {
                if let month = Self.lowestBit(UInt64(months), from: wall.month) {
                    wall = WallTime(year: wall.year, month: month, day: 1)
                } else {
                    wall = WallTime(year: wall.year + 1, month: 1, day: 1)
                }
                continue
            }
            if wall.day > CivilDate.daysInMonth(year: wall.year, month: wall.month) {
                wall =
                    wall.month == 12
                    ? WallTime(year: wall.year + 1, month: 1, day: 1)
                    : WallTime(year: wall.year, month: wall.month + 1, day: 1)
                continue
            }
            guard matchesDay(wall.days, day: wall.day) else {
                wall = WallTime(year: wall.year, month: wall.month, day: wall.day + 1)
                continue
            }
            guard let hour = Self.lowestBit(UInt64(hours), from: wall.hour) else {
                wall = WallTime(year: wall.year, month: wall.month, day: wall.day + 1)
                continue
            }
            if hour != wall.hour {
                wall.hour = hour
                wall.minute = 0
            }
            guard let minute = Self.lowestBit(minutes, from: wall.minute) else {
                if wall.hour == 23 {
                    wall = WallTime(year: wall.year, month: wall.month, day: wall.day + 1)
                } else {
                    wall.hour += 1
                    wall.minute = 0
                }
                continue
            }
            wall.minute = minute
            wall.second = 0
            return wall.localSeconds
        }
        return nil
    }

    /// The lowest set bit of `mask` at position `from` or above.
    static func lowestBit(_ mask: UInt64, from: Int) -> Int? {
        guard from < 64 else { return nil }
        let rest = mask >> UInt64(from)
        return rest == 0 ? nil : from + rest.trailingZeroBitCount
    }
}
