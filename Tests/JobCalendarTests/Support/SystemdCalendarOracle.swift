import Foundation

@testable import JobCalendar

/// `systemd-analyze calendar` as an oracle: many expressions per run.
enum SystemdCalendarOracle {
    /// What systemd printed for one expression.
    struct Result {
        /// Nil when systemd refused the expression or failed computing it
        /// (it then prints nothing for it on stdout).
        var normalized: String?
        /// The elapses, in seconds since the epoch (systemd prints whole seconds).
        var times: [Int64]
    }

    /// One `systemd-analyze calendar --iterations=N --base-time=@BASE EXPR…`
    /// run with `TZ=zone`.
    static func evaluate(_ expressions: [String], zone: String, base: Int64, iterations: Int) throws -> [Result] {
        let output = try Oracle.run(
            try Oracle.systemdAnalyze(),
            ["calendar", "--iterations=\(iterations)", "--base-time=@\(base)", "--"] + expressions,
            environment: ["TZ": zone])
        var lines = output.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let groups = lines.split(separator: "", omittingEmptySubsequences: false)
        guard groups.count == expressions.count else {
            throw MissingOracle(
                description: "systemd-analyze printed \(groups.count) blocks for \(expressions.count) "
                    + "expressions:\n\(output.text)\n\(output.stderr)")
        }
        return groups.map(parse)
    }

    static func parse<Lines: Collection<String>>(_ group: Lines) -> Result {
        let lines = group.map { $0.trimmingCharacters(in: .whitespaces) }
        guard !lines.isEmpty else { return Result(normalized: nil, times: []) }
        var result = Result(normalized: nil, times: [])
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("Normalized form: ") {
                result.normalized = String(line.dropFirst("Normalized form: ".count))
            } else if line.hasPrefix("Next elapse:") || line.hasPrefix("Iter. #") {
                if line.hasSuffix("never") { continue }
                let utcLine =
                    index + 1 < lines.count && lines[index + 1].hasPrefix("(in UTC):") ? lines[index + 1] : line
                if let seconds = seconds(in: utcLine) { result.times.append(seconds) }
            }
        }
        return result
    }

    /// `… 2027-01-15 08:15:00 UTC` → seconds since the epoch.
    static func seconds(in line: String) -> Int64? {
        let fields = line.split(separator: " ")
        guard fields.count >= 3, fields.last == "UTC" else { return nil }
        let date = fields[fields.count - 3].split(separator: "-").compactMap { Int($0) }
        let time = fields[fields.count - 2].split(separator: ":").compactMap { Int($0) }
        guard date.count == 3, time.count == 3 else { return nil }
        return WallTime(year: date[0], month: date[1], day: date[2], hour: time[0], minute: time[1], second: time[2])
            .localSeconds
    }

    /// What this module computes for the same run: nil when it refuses the
    /// expression or gives up as systemd does.
    static func ours(_ expression: String, zone: TimeZone, base: Int64, iterations: Int) -> Result {
        guard let event = try? CalendarEvent(parsing: expression) else { return Result(normalized: nil, times: []) }
        var result = Result(normalized: event.normalizedText, times: [])
        var cursor = base * 1_000_000
        for _ in 0..<iterations {
            switch event.nextElapse(after: cursor, in: zone) {
            case .elapses(let micros):
                result.times.append(CivilDate.floorDivide(micros, 1_000_000))
                cursor = micros
            case .never:
                return result
            case .stuck:
                return Result(normalized: nil, times: [])
            }
        }
        return result
    }
}
