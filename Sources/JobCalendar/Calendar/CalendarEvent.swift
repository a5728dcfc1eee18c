import Foundation

/// A systemd calendar event (systemd.time(7), `OnCalendar=`):
/// `[WEEKDAYS] [YEAR-MONTH-DAY] [HOUR:MINUTE[:SECOND]] [TIMEZONE]`.
///
/// Its fire times are those of `systemd-analyze calendar` of systemd 252.38
/// (Debian 12's, with the fix for searches that come back to their start),
/// clock changes included: the search is systemd's, step for step, over
/// an emulation of glibc's `mktime` (see ``LocalClock``).
///
/// Accepted: weekday names (`Mon`, `Monday`, any case) in lists and
/// ranges (`Mon..Fri`, `Sat,Sun`, the old `Mon-Fri`); in every date and
/// time field `*`, values, lists, ranges `a..b`, repetitions `a/n` and
/// `a..b/n`; `~` for days counted from the month's end (`*-02~01` is the
/// last day of February); seconds with up to six decimals (`*:*:00/0.5`);
/// two-digit years (`24` is 2024); `@SECONDS` for one instant; the
/// shorthands `minutely hourly daily weekly monthly yearly annually
/// quarterly semiannually` (also `anually biannually bi-annually
/// semi-annually`); a trailing time zone of the tz database
/// (`Europe/Berlin`) or `UTC`. Not accepted: a trailing time zone
/// *abbreviation* of the local zone (`CET` is read as the tz database's
/// zone `CET`, not as "the local zone in standard time" as systemd does).
public struct CalendarEvent: Sendable, Hashable, CustomStringConvertible {
    /// The expression as written.
    public let text: String
    /// The zone the expression names, if any (`UTC` included); it wins over
    /// the caller's default zone.
    public let timeZone: TimeZone?

    /// systemd's `weekdays_bits`: bit 0 Monday … bit 6 Sunday; -1 any day.
    let weekdays: Int
    let year: [CalendarComponent]?
    let month: [CalendarComponent]?
    let day: [CalendarComponent]?
    let hour: [CalendarComponent]?
    let minute: [CalendarComponent]?
    /// Seconds in microseconds (0 … 59,999,999).
    let microsecond: [CalendarComponent]?
    /// `day` counts from the month's end (`~`).
    let endOfMonth: Bool
    /// `UTC` was named: plain arithmetic, no zone (systemd's `timegm` path).
    let utc: Bool
    /// The zone's name as written (systemd normalises only `UTC`).
    let timeZoneName: String?

    init(
        text: String, weekdays: Int, year: [CalendarComponent]?, month: [CalendarComponent]?,
        day: [CalendarComponent]?, hour: [CalendarComponent]?, minute: [CalendarComponent]?,
        microsecond: [CalendarComponent]?, endOfMonth: Bool, utc: Bool, timeZoneName: String?, timeZone: TimeZone?
    ) {
        self.text = text
        self.weekdays = weekdays
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.microsecond = microsecond
        self.endOfMonth = endOfMonth
        self.utc = utc
        self.timeZoneName = timeZoneName
        self.timeZone = timeZone
    }

    public var description: String { text }

    /// The expression as `systemd-analyze calendar` prints its "Normalized
    /// form": `Mon..Fri *-*-* 09:00:00 Europe/Berlin`.
    public var normalizedText: String {
        var output = ""
        if weekdays > 0 && weekdays < Self.allWeekdays {
            output += formattedWeekdays() + " "
        }
        output += Self.format(year, width: 4, seconds: false) + "-"
        output += Self.format(month, width: 2, seconds: false) + (endOfMonth ? "~" : "-")
        output += Self.format(day, width: 2, seconds: false) + " "
        output += Self.format(hour, width: 2, seconds: false) + ":"
        output += Self.format(minute, width: 2, seconds: false) + ":"
        output += Self.format(microsecond, width: 2, seconds: true)
        if utc {
            output += " UTC"
        } else if let timeZoneName {
            output += " " + timeZoneName
        }
        return output
    }

    static let allWeekdays = 127
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// systemd's `format_weekdays`: runs of three or more as `a..b`.
    private func formattedWeekdays() -> String {
        var output = ""
        var runStart = -1
        var needComma = false
        func closeRun(at x: Int) {
            if x > runStart + 1 {
                output += (x > runStart + 2 ? ".." : ",") + Self.weekdayNames[x - 1]
            }
        }
        for x in 0..<7 {
            if weekdays & (1 << x) != 0 {
                if runStart < 0 {
                    output += (needComma ? "," : "") + Self.weekdayNames[x]
                    needComma = true
                    runStart = x
                }
            } else if runStart >= 0 {
                closeRun(at: x)
                runStart = -1
            }
        }
        if runStart >= 0 { closeRun(at: 7) }
        return output
    }

    /// systemd's `format_chain`.
    private static func format(_ chain: [CalendarComponent]?, width: Int, seconds: Bool) -> String {
        let unit = seconds ? 1_000_000 : 1
        guard let chain, !(seconds && chain.contains(where: \.coversEverySecond)) else { return "*" }
        func padded(_ value: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        func fraction(_ value: Int) -> String {
            let digits = String(value % unit)
            return "." + String(repeating: "0", count: 6 - digits.count) + digits
        }
        return chain.map { component in
            var text = padded(component.start / unit)
            if component.start % unit > 0 { text += fraction(component.start) }
            if component.stop > 0 { text += ".." + padded(component.stop / unit) }
            if component.stop % unit > 0 { text += fraction(component.stop) }
            if component.repeat > 0 && !(component.stop > 0 && component.repeat == unit) {
                text += "/" + String(component.`repeat` / unit)
            }
            if component.repeat % unit > 0 { text += fraction(component.repeat) }
            return text
        }.joined(separator: ",")
    }
}

/// One item of a field: `start`, `start..stop`, `start/repeat` or
/// `start..stop/repeat`, as systemd keeps it (`stop` -1: none; `repeat` 0: none).
struct CalendarComponent: Sendable, Hashable, Comparable {
    var start: Int
    var stop: Int
    var `repeat`: Int

    var coversEverySecond: Bool { start == 0 && stop < 0 && `repeat` == 1_000_000 }

    static func < (lhs: CalendarComponent, rhs: CalendarComponent) -> Bool {
        (lhs.start, lhs.stop, lhs.repeat) < (rhs.start, rhs.stop, rhs.repeat)
    }
}
