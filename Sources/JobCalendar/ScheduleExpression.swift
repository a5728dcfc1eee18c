import Foundation
import JobValues

/// The key a schedule is written under: `cron:`, `calendar:` or `every:`.
public enum ScheduleKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case cron
    case calendar
    case every

    public var description: String { rawValue }
}

/// When a schedule fires: a cron expression, a systemd calendar event, or
/// a fixed interval.
///
/// Every time this type returns is an occurrence, exact to the microsecond
/// (cron: to the minute; `every`: to the millisecond of its interval).
/// The firing logic needs three questions answered:
///
/// - ``next(after:in:)`` — the occurrence to wait for.
/// - ``previous(atOrBefore:in:)`` — after downtime, the latest occurrence
///   missed (`catch-up: latest`).
/// - ``occurrences(after:through:in:limit:)`` and
///   ``latestOccurrences(after:through:in:limit:)`` — all those missed in
///   an interval, the first or the last `limit` of them (`catch-up: all`).
///
/// All are pure functions of their arguments: every host with the same
/// tz database computes the same times.
public enum ScheduleExpression: Sendable, Hashable, CustomStringConvertible {
    case cron(CronExpression)
    case calendar(CalendarEvent)
    /// Fires at the multiples of the interval since the Unix epoch (UTC).
    case every(Duration)

    /// The most items one list of a cron or calendar field may hold
    /// (systemd's limit for calendar events).
    static let maxListItems = 240

    /// The least time two occurrences of one expression may be apart, of
    /// every kind: a schedule fires at most once a second.
    public static let minimumSpacing: Duration = .seconds(1)

    /// Parses `text` as a `kind` expression whose occurrences are at least
    /// ``minimumSpacing`` apart.
    ///
    /// `every` takes jobd's durations (`15m`, `1h30m`, `90s`, `1d`) of at
    /// least one second; a calendar event's seconds may not repeat faster
    /// (`*:*:00/0.5` and `*:*:00,00.5` are refused, `*:*:00.5` is not);
    /// cron counts whole minutes.
    public static func parse(kind: ScheduleKind, text: String) throws(ScheduleParseError) -> ScheduleExpression {
        switch kind {
        case .cron: .cron(try CronExpression(parsing: text))
        case .calendar:
            .calendar(
                try CalendarEvent(
                    parsing: text, minimumSpacing: Int(minimumSpacing.components.seconds) * CalendarParser.usecPerSecond
                ))
        case .every: .every(try EveryInterval.parse(text))
        }
    }

    public var kind: ScheduleKind {
        switch self {
        case .cron: .cron
        case .calendar: .calendar
        case .every: .every
        }
    }

    /// The expression as written (for `every`, in jobd's duration syntax).
    public var text: String {
        switch self {
        case .cron(let expression): expression.text
        case .calendar(let event): event.text
        case .every(let interval): interval.jobdText
        }
    }

    /// `cron: */15 * * * *`
    public var description: String { "\(kind): \(text)" }

    /// The zone whose wall clock the expression reads: a calendar event's
    /// own zone if it names one, else `defaultZone`; UTC for `every`.
    public func timeZone(default defaultZone: TimeZone) -> TimeZone {
        switch self {
        case .cron: defaultZone
        case .calendar(let event): event.timeZone ?? defaultZone
        case .every: TimeZone(identifier: "UTC") ?? defaultZone
        }
    }

    /// Whether the zone it is read in is the default one it is given (the
    /// schedule's `timezone:`, else the host's): a cron expression, or a
    /// calendar event that names no zone of its own.
    public var readsDefaultZone: Bool {
        switch self {
        case .cron: true
        case .calendar(let event): event.timeZone == nil
        case .every: false
        }
    }

    /// The first occurrence strictly after `date`; nil if there is none
    /// (`0 0 30 2 *`, `2023-02-29`, a calendar event past 2199).
    ///
    /// `defaultZone` is the schedule's `timezone:` (the host's if none):
    /// cron reads it, a calendar event reads it unless it names its own.
    public func next(after date: Date, in defaultZone: TimeZone) -> Date? {
        nextMicros(after: Instant.micros(date), in: defaultZone).map(Instant.date(micros:))
    }

    /// The last occurrence at or before `date`, or nil if none within 400
    /// years.
    ///
    /// For cron and `every` it is exact: the occurrence `next(after:)` would
    /// have returned last. For a calendar event it is the latest time that
    /// `next(after:)` returns from some earlier instant, with no occurrence
    /// between it and `date` — the same, except in the hour a clock change
    /// repeats: systemd fires that hour only when its search starts inside
    /// it, so there it may be a time that a search from before skipped.
    public func previous(atOrBefore date: Date, in defaultZone: TimeZone) -> Date? {
        previousMicros(atOrBefore: Instant.micros(date), in: defaultZone).map(Instant.date(micros:))
    }

    /// The occurrences in `(after, through]`, earliest first, at most `limit`
    /// of them (the earliest).
    public func occurrences(after: Date, through: Date, in defaultZone: TimeZone, limit: Int) -> [Date] {
        var times: [Date] = []
        var cursor = Instant.micros(after)
        let end = Instant.micros(through)
        while times.count < limit, let next = nextMicros(after: cursor, in: defaultZone), next <= end {
            times.append(Instant.date(micros: next))
            cursor = next
        }
        return times
    }

    /// The occurrences in `(after, through]`, earliest first, at most `limit`
    /// of them (the latest): what a capped `catch-up: all` runs.
    public func latestOccurrences(after: Date, through: Date, in defaultZone: TimeZone, limit: Int) -> [Date] {
        var times: [Int64] = []
        let start = Instant.micros(after)
        var cursor = Instant.micros(through)
        while times.count < limit, let previous = previousMicros(atOrBefore: cursor, in: defaultZone),
            previous > start
        {
            times.append(previous)
            cursor = previous - 1
        }
        return times.reversed().map(Instant.date(micros:))
    }

    func nextMicros(after: Int64, in defaultZone: TimeZone) -> Int64? {
        switch self {
        case .cron(let expression):
            let seconds = CivilDate.floorDivide(after, Instant.microsPerSecond)
            return expression.nextSecond(after: seconds, in: ZoneRules(defaultZone)).map {
                $0 * Instant.microsPerSecond
            }
        case .calendar(let event):
            guard case .elapses(let micros) = event.nextElapse(after: after, in: defaultZone) else { return nil }
            return micros
        case .every(let interval):
            return EveryInterval.micros(interval).flatMap { EveryInterval.next(after: after, period: $0) }
        }
    }

    /// The latest `t <= atOrBefore` that `nextMicros` returns: the widest
    /// window back that still holds an occurrence is found by doubling,
    /// then its last occurrence by bisection (`nextMicros` never decreases
    /// as its argument grows).
    func previousMicros(atOrBefore: Int64, in defaultZone: TimeZone) -> Int64? {
        if case .every(let interval) = self {
            return EveryInterval.micros(interval).map { EveryInterval.previous(atOrBefore: atOrBefore, period: $0) }
        }
        let horizon: Int64 = 400 * 366 * 86_400 * Instant.microsPerSecond
        var width = Instant.microsPerSecond
        var low: Int64
        while true {
            low = atOrBefore - width
            if let next = nextMicros(after: low, in: defaultZone), next <= atOrBefore { break }
            guard width < horizon else { return nil }
            width *= 2
        }
        // next(low) <= atOrBefore < next(high).
        var high = atOrBefore
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if let next = nextMicros(after: middle, in: defaultZone), next <= atOrBefore {
                low = middle
            } else {
                high = middle
            }
        }
        return nextMicros(after: low, in: defaultZone)
    }
}

/// Instants as microseconds since the Unix epoch, the unit of the searches.
enum Instant {
    static let microsPerSecond: Int64 = 1_000_000

    /// `date` to the nearest microsecond (a `Date` holds no more).
    static func micros(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    static func date(micros: Int64) -> Date {
        let seconds = CivilDate.floorDivide(micros, microsPerSecond)
        let fraction = micros - seconds * microsPerSecond
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(fraction) / 1_000_000)
    }
}
