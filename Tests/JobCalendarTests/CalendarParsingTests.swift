import Foundation
import Testing

@testable import JobCalendar

@Suite struct CalendarParsingTests {
    struct Refusal: Sendable, CustomTestStringConvertible {
        var text: String
        var field: String
        var column: Int
        var says: String
        var code: ScheduleParseError.Code = .syntax

        var testDescription: String { text }
    }

    static let refusals: [Refusal] = [
        Refusal(text: "", field: "expression", column: 0, says: "it is empty", code: .empty),
        Refusal(text: "*-*-* 25:00", field: "hour", column: 6, says: "25 is out of range 0–23", code: .outOfRange),
        Refusal(text: "*-*-* 12:60", field: "minute", column: 9, says: "60 is out of range 0–59", code: .outOfRange),
        Refusal(
            text: "*-*-* 12:00:60", field: "second", column: 12, says: "60 is out of range 0–59.999999",
            code: .outOfRange),
        Refusal(text: "*-13-01", field: "month", column: 2, says: "13 is out of range 1–12", code: .outOfRange),
        Refusal(text: "2024-02-32", field: "day", column: 8, says: "32 is out of range 1–31", code: .outOfRange),
        Refusal(
            text: "1969-01-01", field: "year", column: 0, says: "1969 is out of range 1970–2199", code: .outOfRange),
        Refusal(text: "*-02~29", field: "day", column: 5, says: "the month's end (~) must be 1–28", code: .outOfRange),
        Refusal(text: "*-*-* 20/5:00", field: "hour", column: 6, says: "20/5 never repeats", code: .outOfRange),
        Refusal(
            text: "*-*-* 5..3:00", field: "hour", column: 6, says: "the range 5..3 ends before it starts",
            code: .outOfRange),
        Refusal(text: "*-*-* 0/0:00", field: "hour", column: 8, says: "longer than 0", code: .outOfRange),
        Refusal(text: "*:*/15", field: "minute", column: 3, says: "write 0/15, not */15"),
        Refusal(text: "*-*/2-* 12:00", field: "date", column: 3, says: "write 0/15, not */15"),
        Refusal(text: "Mon..Fry 12:00", field: "weekday", column: 5, says: "expected a weekday name"),
        Refusal(text: "Mond 12:00", field: "weekday", column: 3, says: "after the weekday"),
        Refusal(text: "Fri..Mon", field: "weekday", column: 5, says: "ends before it starts", code: .outOfRange),
        Refusal(text: "Mon.. 12:00", field: "weekday", column: 6, says: "has no end"),
        Refusal(text: "12 00", field: "date", column: 2, says: "expected \"-\" or \"~\" (a date)"),
        Refusal(text: "*-*-* 12", field: "hour", column: 8, says: "the expression ends"),
        Refusal(text: "*-*-* 12:00:00:00", field: "second", column: 14, says: "unexpected \":\""),
        Refusal(
            text: "*-*-* 12:00:00 Mon", field: "time zone", column: 15, says: "unknown time zone \"Mon\"",
            code: .unknownTimeZone),
        Refusal(text: "*:*:1..1.5", field: "second", column: 4, says: "needs a repetition", code: .outOfRange),
        Refusal(text: "*:*:1.", field: "second", column: 6, says: "decimals after"),
        Refusal(
            text: "*-*-* 12:00 Europe/Berln", field: "time zone", column: 12,
            says: "unknown time zone \"Europe/Berln\"",
            code: .unknownTimeZone),
        Refusal(
            text: "daily Mars/Olympus", field: "time zone", column: 6, says: "unknown time zone", code: .unknownTimeZone
        ),
        Refusal(text: "*-*-* 99999999999:00", field: "hour", column: 6, says: "too large", code: .outOfRange),
        Refusal(text: "2024~02-01", field: "date", column: 7, says: "goes between month and day"),
        Refusal(text: "@", field: "date", column: 1, says: "seconds since 1970"),
        Refusal(text: "fortnightly", field: "date", column: 0, says: "expected a number or *"),
    ]

    @Test(arguments: refusals)
    func refusedWithFieldAndColumn(_ refusal: Refusal) {
        #expect {
            _ = try CalendarEvent(parsing: refusal.text)
        } throws: { error in
            guard let error = error as? ScheduleParseError else { return false }
            return error.field == refusal.field && error.column == refusal.column && error.code == refusal.code
                && error.reason.contains(refusal.says) && error.kind == .calendar
        }
    }

    /// What systemd prints as the normalized form, and the zone each
    /// expression takes its times in.
    @Test(
        arguments: [
            ("Mon..Fri *-*-* 09:00", "Mon..Fri *-*-* 09:00:00", nil),
            ("Sat,Sun", "Sat,Sun *-*-* 00:00:00", nil),
            ("mon,wed,fri 8:5", "Mon,Wed,Fri *-*-* 08:05:00", nil),
            ("daily Europe/Berlin", "*-*-* 00:00:00 Europe/Berlin", "Europe/Berlin"),
            ("*-*-* 12:00 UTC", "*-*-* 12:00:00 UTC", "UTC"),
            ("*-*-* 12:00 utc", "*-*-* 12:00:00 UTC", "UTC"),
            ("quarterly", "*-01,04,07,10-01 00:00:00", nil),
            ("*:0/15", "*-*-* *:00/15:00", nil),
            ("*-02~01", "*-02~01 00:00:00", nil),
            ("26-1-1", "2026-01-01 00:00:00", nil),
            ("*:*:0/0.5", "*-*-* *:*:00/0.500000", nil),
            ("@1800000000", "2027-01-15 08:00:00 UTC", "UTC"),
            ("Mon-Wed,Sat..Sun 1,2:3", "Mon..Wed,Sat,Sun *-*-* 01,02:03:00", nil),
        ] as [(String, String, String?)])
    func normalizedForm(_ example: (String, String, String?)) throws {
        let event = try CalendarEvent(parsing: example.0)
        #expect(event.normalizedText == example.1)
        #expect(event.timeZone?.identifier == example.2.flatMap { TimeZone(identifier: $0)?.identifier })
    }

    @Test func theExpressionsZoneWinsOverTheDefault() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let berlin = try ScheduleExpression.parse(kind: .calendar, text: "*-*-* 09:00 Europe/Berlin")
        let local = try ScheduleExpression.parse(kind: .calendar, text: "*-*-* 09:00")
        let start = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z
        #expect(berlin.next(after: start, in: newYork) == Date(timeIntervalSince1970: 1_800_086_400))  // 08:00Z
        #expect(local.next(after: start, in: newYork) == Date(timeIntervalSince1970: 1_800_021_600))  // 14:00Z
        #expect(berlin.timeZone(default: newYork).identifier == "Europe/Berlin")
        #expect(local.timeZone(default: newYork).identifier == "America/New_York")
    }

    @Test(arguments: ["2023-02-29", "*-02-30", "*-04-31 12:00", "2024-02-30 UTC"])
    func datesThatNeverComeSayNeverAtOnce(_ text: String) throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let expression = try ScheduleExpression.parse(kind: .calendar, text: text)
        let took = ContinuousClock().measure {
            #expect(expression.next(after: Date(timeIntervalSince1970: 1_700_000_000), in: zone) == nil)
        }
        #expect(took < .milliseconds(500), "took \(took)")
    }

    @Test func timeZoneNamesAreCheckedAgainstTheDatabase() {
        #expect(ScheduleTimeZone.named("Europe/Berlin")?.identifier == "Europe/Berlin")
        #expect(ScheduleTimeZone.named("UTC") != nil)
        #expect(ScheduleTimeZone.named("Etc/GMT+5")?.secondsFromGMT() == -5 * 3600)
        for bad in [
            "europe/berlin", "Europe//Berlin", "/etc/passwd", "Europe/", "../zoneinfo/UTC", "GMT+5",
            "Europe/Berlin ", "zone.tab", "",
        ] {
            #expect(ScheduleTimeZone.named(bad) == nil, "\(bad)")
        }
    }
}
