import Foundation
import Testing

@testable import JobCalendar

/// What cron does when clocks change (docs/configuration.md, "Schedules"):
/// a wall time that comes twice fires once, at its first occurrence; one
/// that does not exist fires at the instant the gap ends, once however many
/// matching times the gap swallowed.
@Suite struct CronClockChangeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var expression: String
        var zone: String
        var from: String
        var expected: [String]
        var note: String

        var testDescription: String { "\(expression) in \(zone): \(note)" }
    }

    static let cases: [Case] = [
        // Berlin: 2027-03-28 02:00 CET → 03:00 CEST (01:00Z); 2027-10-31 03:00 CEST → 02:00 CET (01:00Z).
        Case(
            expression: "30 2 * * *", zone: "Europe/Berlin", from: "2027-03-27T12:00:00Z",
            expected: ["2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"], note: "02:30 in the gap fires when it ends"),
        Case(
            expression: "*/15 * * * *", zone: "Europe/Berlin", from: "2027-03-28T00:30:00Z",
            expected: ["2027-03-28T00:45:00Z", "2027-03-28T01:00:00Z", "2027-03-28T01:15:00Z"],
            note: "02:00–02:45 and 03:00 fire once, at 03:00 CEST"),
        Case(
            expression: "30 2 * * *", zone: "Europe/Berlin", from: "2027-10-30T12:00:00Z",
            expected: ["2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"], note: "02:30 fires at its first occurrence"),
        Case(
            expression: "0 * * * *", zone: "Europe/Berlin", from: "2027-10-30T23:30:00Z",
            expected: ["2027-10-31T00:00:00Z", "2027-10-31T02:00:00Z", "2027-10-31T03:00:00Z"],
            note: "the repeated hour does not fire again"),
        Case(
            expression: "*/15 * * * *", zone: "Europe/Berlin", from: "2027-10-31T01:10:00Z",
            expected: ["2027-10-31T02:00:00Z", "2027-10-31T02:15:00Z"],
            note: "from inside the second pass, the next wall time not yet used"),
        // New York: 2027-03-14 02:00 EST → 03:00 EDT (07:00Z); 2027-11-07 02:00 EDT → 01:00 EST (06:00Z).
        Case(
            expression: "30 2 * * *", zone: "America/New_York", from: "2027-03-13T12:00:00Z",
            expected: ["2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"], note: "02:30 in the gap"),
        Case(
            expression: "30 1 * * *", zone: "America/New_York", from: "2027-11-06T12:00:00Z",
            expected: ["2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"], note: "01:30 EDT, not 01:30 EST"),
        // Lord Howe: a 30-minute change. 2027-10-03 02:00 → 02:30 (15:30Z the day before);
        // 2027-04-04 02:00 → 01:30 (15:00Z the day before).
        Case(
            expression: "15 2 * * *", zone: "Australia/Lord_Howe", from: "2027-10-02T00:00:00Z",
            expected: ["2027-10-02T15:30:00Z", "2027-10-03T15:15:00Z"], note: "02:15 in the half-hour gap"),
        Case(
            expression: "45 1 * * *", zone: "Australia/Lord_Howe", from: "2027-04-03T00:00:00Z",
            expected: ["2027-04-03T14:45:00Z", "2027-04-04T15:15:00Z"], note: "01:45 at its first occurrence"),
        Case(
            expression: "*/10 * * * *", zone: "Australia/Lord_Howe", from: "2027-04-03T14:35:00Z",
            expected: ["2027-04-03T14:40:00Z", "2027-04-03T14:50:00Z", "2027-04-03T15:30:00Z"],
            note: "the repeated half hour does not fire again"),
    ]

    static func instant(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text))
    }

    @Test(arguments: cases)
    func clockChange(_ example: Case) throws {
        let expression = try ScheduleExpression.parse(kind: .cron, text: example.expression)
        let zone = try #require(TimeZone(identifier: example.zone))
        var cursor = try Self.instant(example.from)
        var times: [String] = []
        for _ in example.expected {
            guard let next = expression.next(after: cursor, in: zone) else { break }
            times.append(rfc3339(Int64(next.timeIntervalSince1970)))
            cursor = next
        }
        #expect(times == example.expected)
        // previous() walks the same times back.
        for (earlier, later) in zip(example.expected, example.expected.dropFirst()) {
            let before = try Self.instant(later).addingTimeInterval(-1)
            let previous = try #require(expression.previous(atOrBefore: before, in: zone))
            #expect(rfc3339(Int64(previous.timeIntervalSince1970)) == earlier)
        }
    }

    /// Over a whole year in each zone, fire times only ever increase, and
    /// a daily expression fires exactly once per local day.
    @Test(arguments: ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"])
    func dailyFiresOncePerDayAllYear(_ zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        for text in ["30 2 * * *", "0 3 * * *", "45 1 * * *", "0 2 * * *"] {
            let expression = try ScheduleExpression.parse(kind: .cron, text: text)
            var cursor = try Self.instant("2027-01-01T00:00:00Z")
            var days = Set<String>()
            var previous = cursor
            for _ in 0..<365 {
                let next = try #require(expression.next(after: cursor, in: zone))
                #expect(next > previous)
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                let day = calendar.dateComponents([.year, .month, .day], from: next)
                days.insert("\(day.year ?? 0)-\(day.month ?? 0)-\(day.day ?? 0)")
                previous = next
                cursor = next
            }
            #expect(days.count == 365, "\(text) in \(zoneName)")
        }
    }
}
