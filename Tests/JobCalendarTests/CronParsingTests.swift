import Foundation
import Testing

@testable import JobCalendar

@Suite struct CronParsingTests {
    struct Refusal: Sendable, CustomTestStringConvertible {
        var text: String
        var field: String
        var column: Int
        var says: String
        var code: ScheduleParseError.Code

        var testDescription: String { text }
    }

    static let refusals: [Refusal] = [
        Refusal(text: "", field: "expression", column: 0, says: "it is empty", code: .empty),
        Refusal(text: "* * * *", field: "expression", column: 7, says: "five fields", code: .syntax),
        Refusal(text: "0 * * * * *", field: "expression", column: 10, says: "a seconds or years field", code: .syntax),
        Refusal(text: "61 * * * *", field: "minute", column: 0, says: "61 is out of range 0–59", code: .outOfRange),
        Refusal(text: "0 24 * * *", field: "hour", column: 2, says: "24 is out of range 0–23", code: .outOfRange),
        Refusal(text: "0 0 0 * *", field: "day-of-month", column: 4, says: "0 is out of range 1–31", code: .outOfRange),
        Refusal(text: "0 0 1 13 *", field: "month", column: 6, says: "13 is out of range 1–12", code: .outOfRange),
        Refusal(text: "0 0 * * 8", field: "day-of-week", column: 8, says: "8 is out of range 0–7", code: .outOfRange),
        Refusal(text: "0 0 * foo *", field: "month", column: 6, says: "unknown name \"foo\"", code: .unknownName),
        Refusal(
            text: "0 0 * * monday", field: "day-of-week", column: 8, says: "unknown name \"monday\"",
            code: .unknownName),
        Refusal(text: "*/0 * * * *", field: "minute", column: 2, says: "a step must be 1 or more", code: .outOfRange),
        Refusal(text: "0 5-5 * * *", field: "hour", column: 2, says: "the range 5-5 has one value", code: .outOfRange),
        Refusal(text: "50-10 * * * *", field: "minute", column: 3, says: "before its start 50", code: .outOfRange),
        Refusal(text: "0 0 * * 5-1", field: "day-of-week", column: 10, says: "fri-sun, 5-7", code: .outOfRange),
        Refusal(text: "0 23/2 * * *", field: "hour", column: 2, says: "never repeats", code: .outOfRange),
        Refusal(text: "0 0 1,,2 * *", field: "day-of-month", column: 6, says: "an empty item", code: .syntax),
        Refusal(text: "0 0 L * *", field: "day-of-month", column: 4, says: "L (last", code: .unsupported),
        Refusal(
            text: "0 0 15W * *", field: "day-of-month", column: 6, says: "W (last, nearest weekday)",
            code: .unsupported),
        Refusal(text: "0 0 * * 1#2", field: "day-of-week", column: 9, says: "# (the nth weekday", code: .unsupported),
        Refusal(text: "0 0 ? * 1", field: "day-of-month", column: 4, says: "? is not supported", code: .unsupported),
        Refusal(text: "H * * * *", field: "minute", column: 0, says: "H (hashed values)", code: .unsupported),
        Refusal(text: "0 abc * * *", field: "hour", column: 2, says: "hour takes numbers", code: .syntax),
        Refusal(text: "0 0 * * 1-", field: "day-of-week", column: 10, says: "expected a value", code: .syntax),
        Refusal(text: "0 0 * * 1-,2", field: "day-of-week", column: 10, says: "expected a value", code: .syntax),
        Refusal(text: "0 0 * * -1", field: "day-of-week", column: 8, says: "unexpected \"-1\"", code: .syntax),
        Refusal(text: "@reboot", field: "expression", column: 0, says: "unknown shorthand @reboot", code: .unknownName),
        Refusal(text: "  1-2/x * * * *", field: "minute", column: 6, says: "expected a step", code: .syntax),
        Refusal(
            text: "0\u{A0}0 * * *", field: "expression", column: 1,
            says: "a non-ASCII space (U+A0) is not a field separator",
            code: .syntax),
        // Lists stop at 240 items, as a calendar field's do: the 241st is refused.
        Refusal(
            text: longMinuteList(241) + " * * * *", field: "minute", column: longMinuteList(241).count - 1,
            says: "more than 240 items in one list", code: .outOfRange),
    ]

    /// `0,1,…,59,0,1,…`: `count` minutes.
    static func longMinuteList(_ count: Int) -> String {
        (0..<count).map { String($0 % 60) }.joined(separator: ",")
    }

    @Test func aListOf240ItemsIsAccepted() throws {
        _ = try CronExpression(parsing: Self.longMinuteList(240) + " * * * *")
    }

    @Test(arguments: refusals)
    func refusedWithFieldAndColumn(_ refusal: Refusal) {
        #expect {
            _ = try CronExpression(parsing: refusal.text)
        } throws: { error in
            guard let error = error as? ScheduleParseError else { return false }
            return error.field == refusal.field && error.column == refusal.column && error.code == refusal.code
                && error.reason.contains(refusal.says) && error.kind == .cron && error.expression == refusal.text
        }
    }

    @Test func descriptionIsOneLineNamingFieldAndColumn() throws {
        let error = try #require(throws: ScheduleParseError.self) { try CronExpression(parsing: "0 24 * * *") }
        #expect(
            error.description == "invalid cron expression \"0 24 * * *\": hour at column 3: 24 is out of range 0–23")
        #expect(error.message == "hour: 24 is out of range 0–23")
    }

    /// Spellings that mean the same schedule fire at the same times.
    @Test(arguments: [
        ("0 0 * * 0", "0 0 * * 7"), ("0 0 * * 0", "0 0 * * SUN"), ("0 0 * * 1-5", "0 0 * * Mon-FRI"),
        ("0 0 1 1 *", "@yearly"), ("0 0 1 1 *", "@annually"), ("0 0 * * *", "@midnight"), ("0 0 * * *", "@Daily"),
        ("0 * * * *", "@hourly"), ("0 0 * * 0", "@weekly"), ("0 0 1 * *", "@monthly"),
        ("0 0 1 jan,jul *", "0 0 1 1,7 *"),
        ("*/15 * * * *", "0,15,30,45 * * * *"), ("5/20 * * * *", "5,25,45 * * * *"), ("0 0 * * 5-7", "0 0 * * fri-sun"),
        ("0 0 * * 0-7", "0 0 * * *"), ("1-30/5 * * * *", "1,6,11,16,21,26 * * * *"), ("0\t0 * *  *", "0 0 * * *"),
    ])
    func sameSchedule(_ pair: (String, String)) throws {
        let zone = try #require(TimeZone(identifier: "UTC"))
        let a = try ScheduleExpression.parse(kind: .cron, text: pair.0)
        let b = try ScheduleExpression.parse(kind: .cron, text: pair.1)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let end = start.addingTimeInterval(86_400 * 400)
        #expect(
            a.occurrences(after: start, through: end, in: zone, limit: 200)
                == b.occurrences(after: start, through: end, in: zone, limit: 200))
    }

    /// Both day fields restricted: a day matching either fires — even where
    /// the day of month never comes (croniter raises here instead).
    @Test func eitherDayFieldMatches() throws {
        let zone = try #require(TimeZone(identifier: "UTC"))
        let expression = try ScheduleExpression.parse(kind: .cron, text: "0 0 31 4,6,9,11 1")
        let times = expression.occurrences(
            after: Date(timeIntervalSince1970: 1_798_761_600),  // 2027-01-01
            through: Date(timeIntervalSince1970: 1_830_297_600), in: zone, limit: 100)
        #expect(times.count == 17)  // the Mondays of April, June, September and November 2027
        #expect(times.map { rfc3339(Int64($0.timeIntervalSince1970)) }.first == "2027-04-05T00:00:00Z")
    }

    @Test(arguments: ["0 0 30 2 *", "0 0 31 4 *", "0 0 31 2,4,6 *", "0 0 30,31 2 *"])
    func impossibleDatesNeverFireAndSayItAtOnce(_ text: String) throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let expression = try ScheduleExpression.parse(kind: .cron, text: text)
        let clock = ContinuousClock()
        let took = clock.measure {
            #expect(expression.next(after: Date(timeIntervalSince1970: 1_800_000_000), in: zone) == nil)
            #expect(expression.previous(atOrBefore: Date(timeIntervalSince1970: 1_800_000_000), in: zone) == nil)
        }
        #expect(took < .milliseconds(500), "took \(took)")
    }

    @Test func leapDayComesEveryFourYearsAndSkips2100() throws {
        let zone = try #require(TimeZone(identifier: "UTC"))
        let expression = try ScheduleExpression.parse(kind: .cron, text: "0 12 29 2 *")
        var cursor = Date(timeIntervalSince1970: 4_070_908_800)  // 2099-01-01
        var years: [Int] = []
        for _ in 0..<3 {
            let next = try #require(expression.next(after: cursor, in: zone))
            years.append(WallTime(localSeconds: Int64(next.timeIntervalSince1970)).year)
            cursor = next
        }
        #expect(years == [2104, 2108, 2112])
    }
}
