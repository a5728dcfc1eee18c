import Foundation
import Spawn
import TestSupport
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
    static func compare(
        _ expressions: [String], zones: [String], iterations: Int,
        bases: (TimeZone) -> [Int64] = baseTimes
    ) throws -> (agreed: Int, elapses: Int, [Mismatch]) {
        var mismatches: [Mismatch] = []
        var agreed = 0
        var elapses = 0
        for zoneName in zones {
            let zone = try #require(TimeZone(identifier: zoneName))
            for base in bases(zone) {
                let theirs = try SystemdCalendarOracle.evaluate(
                    expressions, zone: zoneName, base: base,
                    iterations: iterations)
                for (expression, their) in zip(expressions, theirs) {
                    let ours = SystemdCalendarOracle.ours(expression, zone: zone, base: base, iterations: iterations)
                    if ours.normalized == their.normalized && ours.times == their.times {
                        agreed += 1
                        elapses += ours.times.count
                    } else {
                        mismatches.append(
                            Mismatch(
                                expression: expression, zone: zoneName, base: base, ours: ours,
                                theirs: their))
                    }
                }
            }
        }
        return (agreed, elapses, mismatches)
    }

    static func expectNone(_ mismatches: [Mismatch], agreed: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let report = mismatches.prefix(10).map(\.description).joined(separator: "\n")
        let count = mismatches.count
        #expect(count == 0, "\(count) runs differ, \(agreed) agree:\n\(report)", sourceLocation: sourceLocation)
    }

    /// Around clock changes: every minute, quarter hour and hour, times in
    /// the gap or the overlap, seconds, and the same with the zone in the
    /// expression (systemd then computes in a child with that TZ).
    @Test func clockChangesAgreeWithSystemd() async throws {
        let expressions = [
            "*-*-* *:*:00", "*:0/15", "hourly", "*-*-* 02:30", "*-*-* 01:30", "*-*-* 02:00", "*-*-* 03:00",
            "*-*-* 02,03:00,30", "*-*-* 01..03:*:00/20", "*-*-* 02:15:30", "daily", "*-*-* 01:45",
            "*-*-* 02:*", "Sun *-*-* 02:30", "*-*-* 00/2:00", "*-*-* 23:59:59",
            "*-*-* 02:30 Europe/Berlin", "*:0/15 America/New_York", "*-*-* 02:15 Australia/Lord_Howe",
            "*-*-* 01:30 America/New_York", "*-*-* 02:00:00/10 Australia/Lord_Howe", "*-*-* 12:00 UTC",
        ]
        let zones = Self.zones + ["Europe/Dublin", "Pacific/Chatham", "America/Santiago"]
        let (agreed, elapses, mismatches) = try await onOwnThread {
            try Self.compare(expressions, zones: zones, iterations: 12)
        }
        Self.expectNone(mismatches, agreed: agreed)
        #expect(elapses > 8_000)
        print("calendar oracle, clock changes: \(agreed) runs agree with systemd-analyze (\(elapses) elapses)")
    }

    /// 29 February, days counted from the month's end, year ends, dates
    /// that never come, the last years systemd computes.
    @Test func datesAgreeWithSystemd() async throws {
        let expressions = [
            "*-02-29", "*-02-29 12:00", "*-02~01", "*-*~01", "*-*~03..01", "*-02~07/2", "*-*~28", "*-12-31 23:59:59",
            "*-01-01 00:00:00", "2028-02-29", "2027-02-29", "*-02-30", "*-04-31", "*-*-31", "*-*-29,30,31 18:00",
            "Mon *-*-01", "Fri *-*-13", "Sat,Sun *-*-01..07 10:00", "2199-12-31 23:59:59", "2198..2199-*-* 00:00",
            "*-1..3/2-01", "yearly", "quarterly", "semiannually", "monthly", "weekly", "Mon..Fri *-*-* 09:00",
            "*-*-* 00:00:00.5", "*:*:0/0.25", "@1900000000", "@1800000000", "20..30-06-15", "Wed..Sun,Mon 01:02:03",
        ]
        let bases: @Sendable (TimeZone) -> [Int64] = { _ in
            [1_830_297_600 /* 2027-12-31T21:20Z */, 1_835_380_800, 7_226_000_000]
        }
        let (agreed, elapses, mismatches) = try await onOwnThread {
            try Self.compare(expressions, zones: Self.zones, iterations: 8, bases: bases)
        }
        Self.expectNone(mismatches, agreed: agreed)
        #expect(elapses > 1_500)
        print("calendar oracle, dates: \(agreed) runs agree with systemd-analyze (\(elapses) elapses)")
    }

    @Test func generatedExpressionsAgreeWithSystemd() async throws {
        var generator = CalendarGenerator(seed: 20)
        let expressions = (0..<400).map { _ in generator.expression() }
        let (agreed, elapses, mismatches) = try await onOwnThread {
            try Self.compare(expressions, zones: Self.zones, iterations: 10)
        }
        Self.expectNone(mismatches, agreed: agreed)
        // Not a degenerate sample: most parse, some are refused, most elapse.
        let accepted = expressions.filter { (try? CalendarEvent(parsing: $0)) != nil }.count
        #expect(accepted > 280 && accepted < 400, "\(accepted) of 400 accepted")
        #expect(elapses > 20_000, "\(elapses) elapses compared")
        print("calendar oracle: \(agreed) runs agree with systemd-analyze (\(elapses) elapses)")
    }
}
