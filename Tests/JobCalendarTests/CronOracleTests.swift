import Foundation
import Spawn
import TestSupport
import Testing

@testable import JobCalendar

/// Cron expressions against croniter 6.2.4: the next 20 fire times from
/// several start instants, in UTC, in zones without clock changes (Tokyo,
/// Kolkata +5:30, Kathmandu +5:45), and in Berlin and New York where no
/// clock change falls within the run.
@Suite struct CronOracleTests {
    static let zones = ["UTC", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu", "Europe/Berlin", "America/New_York"]
    static let starts: [Int64] = [
        1_795_533_825,  // 2026-11-24T12:43:45Z
        1_803_772_770,  // 2027-02-27T23:59:30Z, before a month's end
        1_835_395_200,  // 2028-02-29T00:00:00Z, a leap day, on a minute
        1_924_988_399,  // 2030-12-31T23:59:59Z, a year's end
        1_812_844_800,  // 2027-06-12T00:00:00Z
    ]

    /// Compares the runs; runs in a zone whose offset changes within them
    /// are left out (croniter and jobd part ways there, by design).
    static func compare(_ runs: [CronOracle.Run]) throws -> (agreed: Int, times: Int, skipped: Int, [String]) {
        let theirs = try CronOracle.evaluate(runs)
        var mismatches: [String] = []
        var agreed = 0
        var times = 0
        var skipped = 0
        for (run, their) in zip(runs, theirs) {
            let ours = try CronOracle.ours(run)
            guard case .success(let expected) = their else {
                mismatches.append("\(run.expr): croniter refused it (\(their)), ours \(ours.map(rfc3339))")
                continue
            }
            let zone = try #require(TimeZone(identifier: run.zone))
            let last = max(ours.last ?? run.start, expected.last ?? run.start)
            if let change = zone.nextDaylightSavingTimeTransition(
                after: Date(timeIntervalSince1970: TimeInterval(run.start))),
                Int64(change.timeIntervalSince1970) <= last
            {
                skipped += 1
                continue
            }
            if ours == expected {
                agreed += 1
                times += ours.count
            } else {
                mismatches.append(
                    "\(run.expr) in \(run.zone) from \(rfc3339(run.start)): ours \(ours.map(rfc3339)), "
                        + "croniter \(expected.map(rfc3339))")
            }
        }
        return (agreed, times, skipped, mismatches)
    }

    @Test func generatedExpressionsAgreeWithCroniter() async throws {
        var generator = CronGenerator(seed: 20)
        var runs: [CronOracle.Run] = []
        var refused: [String] = []
        for _ in 0..<400 {
            let expression = generator.expression()
            guard (try? CronExpression(parsing: expression)) != nil else {
                refused.append(expression)
                continue
            }
            for _ in 0..<3 {
                runs.append(
                    CronOracle.Run(
                        expr: expression, zone: generator.random.pick(Self.zones),
                        start: generator.random.pick(Self.starts), count: 20))
            }
        }
        #expect(refused.isEmpty, "the generator writes only valid expressions: \(refused.prefix(10))")
        let (agreed, times, skipped, mismatches) = try await onOwnThread { [runs] in try Self.compare(runs) }
        let report = mismatches.prefix(10).joined(separator: "\n")
        let count = mismatches.count
        #expect(count == 0, "\(count) runs differ, \(agreed) agree:\n\(report)")
        #expect(agreed > 1_000 && times > 20_000, "\(agreed) runs, \(times) fire times, \(skipped) skipped")
        print(
            "cron oracle: \(agreed) runs agree with croniter (\(times) fire times; \(skipped) across a clock change left out)"
        )
    }

    /// The day fields' rule in every form croniter reads differently, month
    /// ends, 29 February, year ends.
    @Test func dayRulesAndDatesAgreeWithCroniter() async throws {
        let expressions = [
            "0 0 1 * 1", "0 0 */2 * 1", "0 0 1-31 * 1", "0 0 1 * 0-6", "0 0 */1 * 1", "0 0 * * */2", "0 0 1,15 * 1-5",
            "0 0 1-31 * */2", "0 0 */1 * 0-6", "0 0 13 * fri", "0 0 13 * 5", "0 0 * * 7", "0 0 * * 0,7", "0 0 1 * 7",
            "0 12 29 2 *", "0 12 29 2 1", "59 23 31 12 *", "0 0 31 * *", "0 0 30 * *", "30 2 28-31 * *",
            "0 0 1 jan-mar/2 *", "0 0 * feb sat,sun", "*/10 23 31 dec *", "0 0 29-31 2 *",
            "0 9-17/2 * * MON-FRI", "5/10 * * * *", "0 0 10/5 * *", "0 0 * * 5/2", "15 14 1 * *", "@yearly", "@weekly",
        ]
        var runs: [CronOracle.Run] = []
        for expression in expressions {
            for zone in ["UTC", "Asia/Kathmandu"] {
                for start in Self.starts {
                    runs.append(CronOracle.Run(expr: expression, zone: zone, start: start, count: 25))
                }
            }
        }
        let (agreed, times, _, mismatches) = try await onOwnThread { [runs] in try Self.compare(runs) }
        let report = mismatches.prefix(10).joined(separator: "\n")
        let count = mismatches.count
        #expect(count == 0, "\(count) runs differ, \(agreed) agree:\n\(report)")
        #expect(agreed == runs.count && times > 7_000)
        print("cron oracle, day rules and dates: \(agreed) runs agree with croniter (\(times) fire times)")
    }
}
