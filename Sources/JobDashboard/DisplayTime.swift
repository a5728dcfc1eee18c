import Foundation

/// Times and durations as the pages show them. Times are UTC (the server
/// cannot know the reader's zone without script), ISO-8601 to the second,
/// with a relative form (`3 min ago`) for lists.
enum DisplayTime {
    /// `2026-05-01 12:34:56Z`.
    static func utc(_ date: Date) -> String {
        let components = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int = 2) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(components.year, 4))-\(pad(components.month))-\(pad(components.day)) "
            + "\(pad(components.hour)):\(pad(components.minute)):\(pad(components.second))Z"
    }

    /// `HH:MM:SS.mmm` of a UTC time, for log lines (the day is the stage's).
    static func lineTime(_ date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        let text = String(milliseconds)
        return String(utc(date).dropFirst(11).prefix(8)) + "." + String(repeating: "0", count: 3 - text.count) + text
    }

    /// `HH:MM` of a UTC time, for chart axes.
    static func clock(_ date: Date) -> String {
        String(utc(date).dropFirst(11).prefix(5))
    }

    /// `in 3 min`, `12 s ago`, `just now`.
    static func relative(_ date: Date, now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        if abs(seconds) < 1 { return "just now" }
        let span = duration(abs(seconds), coarse: true)
        return seconds > 0 ? "in \(span)" : "\(span) ago"
    }

    /// `840 ms`, `12.4 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. Coarse:
    /// whole units only (`12 s`, `3 min`).
    static func duration(_ seconds: Double, coarse: Bool = false) -> String {
        if seconds <= 0 { return "0 ms" }
        if seconds < 1 {
            return coarse
                ? "\(Int(seconds * 1000)) ms" : "\(decimal(seconds * 1000, digits: seconds < 0.01 ? 1 : 0)) ms"
        }
        if seconds < 60 { return coarse ? "\(Int(seconds)) s" : "\(decimal(seconds, digits: 1)) s" }
        let whole = Int(seconds)
        if whole < 3600 { return coarse ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s" }
        if whole < 86_400 { return coarse ? "\(whole / 3600) h" : "\(whole / 3600) h \(whole % 3600 / 60) min" }
        return coarse ? "\(whole / 86_400) d" : "\(whole / 86_400) d \(whole % 86_400 / 3600) h"
    }

    /// `value` with `digits` decimals, `.` as the separator whatever the locale.
    static func decimal(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "–" }
        let scale = pow(10, Double(digits))
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(Int(scaled.truncatingRemainder(dividingBy: scale)))
        return sign + "\(whole)." + String(repeating: "0", count: max(0, digits - fraction.count)) + fraction
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        return calendar
    }()

    /// A `<time>` element: the UTC time, or relative when `now` is given,
    /// with the other form as its tooltip.
    static func element(_ date: Date?, now: Date? = nil) -> HTML {
        guard let date else { return "<span class=\"none\">–</span>" }
        let iso = utc(date)
        let machine = iso.replacingOccurrences(of: " ", with: "T")
        guard let now else { return "<time datetime=\"\(attribute: machine)\">\(iso)</time>" }
        return "<time datetime=\"\(attribute: machine)\" title=\"\(attribute: iso)\">\(relative(date, now: now))</time>"
    }
}
