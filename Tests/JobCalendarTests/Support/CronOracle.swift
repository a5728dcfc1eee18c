import Foundation
import TestSupport
import Testing

@testable import JobCalendar

/// croniter (PyPI, pinned by scripts/test-deps) as an oracle: one Python
/// process for a whole batch of runs.
enum CronOracle {
    struct Run: Encodable {
        var expr: String
        var zone: String
        var start: Int64
        var count: Int
    }

    /// For each run, croniter's next `count` fire times (seconds since the
    /// epoch), or the error it raised.
    static func evaluate(_ runs: [Run]) throws -> [Result<[Int64], MissingOracle>] {
        let script = """
            import datetime, json, sys, zoneinfo
            from croniter import croniter
            out = []
            for run in json.load(sys.stdin):
                try:
                    start = datetime.datetime.fromtimestamp(run["start"], zoneinfo.ZoneInfo(run["zone"]))
                    it = croniter(run["expr"], start)
                    out.append([int(it.get_next(float)) for _ in range(run["count"])])
                except Exception as error:
                    out.append(type(error).__name__ + ": " + str(error))
            json.dump(out, sys.stdout)
            """
        let output = try Oracle.run(try Oracle.python(), ["-c", script], stdin: try JSONEncoder().encode(runs))
        guard output.status == 0,
            let results = try JSONSerialization.jsonObject(with: output.stdout) as? [Any],
            results.count == runs.count
        else {
            throw MissingOracle(description: "croniter failed (exit \(output.status)): \(output.stderr)")
        }
        return results.map { item in
            if let times = item as? [NSNumber] { return .success(times.map(\.int64Value)) }
            return .failure(MissingOracle(description: "\(item)"))
        }
    }

    /// This module's next `count` fire times for the same run.
    static func ours(_ run: Run) throws -> [Int64] {
        let expression = try ScheduleExpression.parse(kind: .cron, text: run.expr)
        let zone = try #require(TimeZone(identifier: run.zone))
        var times: [Int64] = []
        var cursor = Date(timeIntervalSince1970: TimeInterval(run.start))
        for _ in 0..<run.count {
            guard let next = expression.next(after: cursor, in: zone) else { break }
            times.append(Int64(next.timeIntervalSince1970))
            cursor = next
        }
        return times
    }
}

/// Random five-field cron expressions: values, ranges, steps of every
/// form, lists, month and weekday names in any case, 7 for Sunday, both
/// day fields restricted, shorthands.
struct CronGenerator {
    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    static let shorthands = ["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually", "@DAILY"]

    mutating func expression() -> String {
        if random.chance(3) { return random.pick(Self.shorthands) }
        return [
            field(0, 59, star: 25, names: []),
            field(0, 23, star: 35, names: []),
            field(1, 31, star: 55, names: []),
            field(1, 12, star: 65, names: Self.months),
            weekdayField(),
        ].joined(separator: random.chance(10) ? "  " : " ")
    }

    mutating func weekdayField() -> String {
        if random.chance(55) { return "*" }
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return random.pick(["0-6", "*/1", "1-7", "0-7", "mon-sun", "7", "sat,sun", "fri-sun", "5-7"])
        case 1: return "\(Int.random(in: 1...6, using: &random))-7/\(Int.random(in: 1...3, using: &random))"
        default: return field(0, 6, star: 0, names: Self.weekdays)
        }
    }

    mutating func name(_ names: [String], _ value: Int, low: Int) -> String {
        let text = names[value - low]
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return text.uppercased()
        case 1: return text.prefix(1).uppercased() + text.dropFirst()
        default: return text
        }
    }

    mutating func value(_ value: Int, _ low: Int, _ names: [String]) -> String {
        !names.isEmpty && random.chance(40) ? name(names, value, low: low) : String(value)
    }

    mutating func field(_ low: Int, _ high: Int, star: Int, names: [String]) -> String {
        if random.chance(star) { return random.chance(85) ? "*" : "*/1" }
        var items: [String] = []
        for _ in 0..<(random.chance(65) ? 1 : Int.random(in: 2...4, using: &random)) {
            let first = Int.random(in: low...high, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3:
                items.append(value(first, low, names))
            case 4, 5:
                guard first < high else {
                    items.append(String(first))
                    continue
                }
                let last = Int.random(in: (first + 1)...high, using: &random)
                items.append(value(first, low, names) + "-" + value(last, low, names))
            case 6:
                items.append("*/\(Int.random(in: 2...max(2, (high - low + 1) / 2), using: &random))")
            case 7:
                // `a/n` from the field's last value is refused (croniter reads it as the whole field).
                let first = min(first, high - 1)
                items.append(
                    "\(value(first, low, names))/\(Int.random(in: 1...max(1, (high - low) / 2), using: &random))")
            default:
                guard first < high else {
                    items.append(String(first))
                    continue
                }
                let last = Int.random(in: (first + 1)...high, using: &random)
                let step = Int.random(in: 1...max(1, (last - first)), using: &random)
                items.append(value(first, low, names) + "-" + value(last, low, names) + "/\(step)")
            }
        }
        return items.joined(separator: ",")
    }
}
