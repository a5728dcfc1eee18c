import Foundation
import Testing
@testable import JobCalendar

/// Calendar events against `systemd-analyze calendar` (systemd 252): the
/// normalized form, refusals, and the next elapses from fixed base times,
/// in UTC and in zones with clock changes (runs that start a few hours
/// before one).
@Suite struct CalendarOracleTests {
    static let zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]

    /// A few hours before the first two clock changes of 2027 and 2030, a
    /// 29 February, and a year's end.
    static func baseTimes(_ zone: TimeZone) -> [Int64] {
        var bases: [Int64] = [1_835_380_800 /* 2028-02-28T20:00Z */, 1_924_977_600 /* 2030-12-31T20:00Z */]
        for start in [1_798_761_600.0 /* 2027-01-01 */, 1_893_456_000 /* 2030-01-01 */] {
            var cursor = Date(timeIntervalSince1970: start)
            for _ in 0..<2 {
                guard let change = zone.nextDaylightSavingTimeTransition(after: cursor) else { break }
                bases.append(Int64(change.timeIntervalSince1970) - 3 * 3600 + 7)
                cursor = change
            }
        }
        return bases
    }

    struct Mismatch: CustomStringConvertible {
        var expression: String
        var zone: String
        var base: Int64
        var ours: SystemdCalendarOracle.Result
        var theirs: SystemdCalendarOracle.Result

        var description: String {
            "\(expression) in \(zone) from \(rfc3339(base)): ours \(ours.normalized ?? "refused") "
                + "\(ours.times.map(rfc3339)), systemd \(theirs.normalized ?? "refused") \(theirs.times.map(rfc3339))"
        }
    }

    /// Compares every expression from every base time in every zone;
    /// returns how many runs agreed and the disagreements.
    static func compare(_ expressions: [String], zones: [String], iterations: Int,
                        bases: (TimeZone) -> [Int64] = baseTimes) throws -> (agreed: Int, elapses: Int, [Mismatch]) {
        var mismatches: [Mismatch] = []
        var agreed = 0
        var elapses = 0
        for zoneName in zones {
            let zone = try #require(TimeZone(identifier: zoneName))
            for base in bases(zone) {
                let theirs = try SystemdCalendarOracle.evaluate(expressions, zone: zoneName, base: base,
                                                                iterations: iterations)
                for (expression, their) in zip(expressions, theirs) {
                    let ours = SystemdCalendarOracle.ours(expression, zone: zone, base: base, iterations: iterations)
                    if ours.normalized == their.normalized && ours.times == their.times {
                        agreed += 1
                        elapses += ours.times.count
                    } else {
                        mismatches.append(Mismatch(expression: expression, zone: zoneName, base: base, ours: ours,
                                                   theirs: their))
                    }
                }
            }
        }
        return (agreed, elapses, mismatches)
    }

    @Test func generatedExpressionsAgreeWithSystemd() throws {
        var generator = CalendarGenerator(seed: 20)
        let expressions = (0..<400).map { _ in generator.expression() }
        let (agreed, elapses, mismatches) = try Self.compare(expressions, zones: Self.zones, iterations: 10)
        let report = mismatches.prefix(15).map(\.description).joined(separator: "\n")
        #expect(mismatches.isEmpty, "\(mismatches.count) runs differ, \(agreed) agree:\n\(report)")
        // Not a degenerate sample: most parse, some are refused, most elapse.
        let accepted = expressions.filter { (try? CalendarEvent(parsing: $0)) != nil }.count
        #expect(accepted > 280 && accepted < 400, "\(accepted) of 400 accepted")
        #expect(elapses > 20_000, "\(elapses) elapses compared")
        print("calendar oracle: \(agreed) runs agree with systemd-analyze (\(elapses) elapses)")
    }
}
