/// Proleptic Gregorian calendar arithmetic on plain integers, without
/// Foundation's `Calendar` (whose per-call cost would dominate a search).
///
/// Days are counted from 1970-01-01 (day 0); months are 1...12.
enum CivilDate {
    static let secondsPerDay: Int64 = 86_400

    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a date whose month may lie outside 1...12
    /// and whose day may lie outside the month (both carry over, as
    /// `mktime` lets them).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let monthIndex = month - 1
        let carry = monthIndex >= 0 ? monthIndex / 12 : (monthIndex - 11) / 12
        let y = Int64(year + carry)
        let m = Int64(monthIndex - carry * 12 + 1)
        // Howard Hinnant's days_from_civil, for the first of the month.
        let shifted = m <= 2 ? y - 1 : y
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468 + Int64(day - 1)
    }

    /// The date of a day counted from 1970-01-01.
    static func date(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
    static func weekday(days: Int64) -> Int {
        Int(((days % 7) + 11) % 7)
    }

    /// `value` divided by `divisor`, rounded towards negative infinity.
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// A wall-clock time of day on a date, to the second, as a zone shows it;
/// fields may be out of range (minute 60, day 32) until normalised.
struct WallTime: Hashable, Sendable, Comparable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The wall time `seconds` after 1970-01-01 00:00:00 on the same clock.
    init(localSeconds seconds: Int64) {
        let days = CivilDate.floorDivide(seconds, CivilDate.secondsPerDay)
        let rest = Int(seconds - days * CivilDate.secondsPerDay)
        let date = CivilDate.date(days: days)
        self.init(
            year: date.year, month: date.month, day: date.day,
            hour: rest / 3600, minute: rest / 60 % 60, second: rest % 60)
    }

    /// Seconds since 1970-01-01 00:00:00 on this clock, carrying any
    /// out-of-range field over (what `timegm` computes).
    var localSeconds: Int64 {
        CivilDate.days(year: year, month: month, day: day) * CivilDate.secondsPerDay
            + Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)
    }

    var days: Int64 { CivilDate.days(year: year, month: month, day: day) }

    static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.localSeconds < rhs.localSeconds }
}
