import Foundation
import Testing

@testable import JobCalendar

@Suite struct ScheduleExpressionTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    // MARK: every

    @Test(arguments: [
        ("15m", 900_000), ("1h30m", 5_400_000), ("90s", 90_000), ("1d", 86_400_000),
        ("1500ms", 1_500), (" 2h ", 7_200_000), ("1s", 1_000),
    ])
    func everyParsesJobdDurations(_ example: (String, Int64)) throws {
        let expression = try ScheduleExpression.parse(kind: .every, text: example.0)
        #expect(expression == .every(.milliseconds(example.1)))
        #expect(expression.kind == .every)
    }

    @Test(arguments: [
        ("", "it is empty"), ("500ms", "at least 1s"), ("0s", "at least 1s"), ("15", "needs a unit"),
        ("1.5m", "fractions"), ("5x", "unknown unit \"x\""), ("30s1m", "largest to smallest"),
        ("-5m", "cannot be negative"), ("99999999999999999999s", "too long"),
    ])
    func everyRefusals(_ example: (String, String)) {
        #expect {
            _ = try ScheduleExpression.parse(kind: .every, text: example.0)
        } throws: { error in
            guard let error = error as? ScheduleParseError else { return false }
            return error.kind == .every && error.field == "duration" && error.reason.contains(example.1)
        }
    }

    @Test func everyFiresAtMultiplesSinceTheEpochWhateverTheZone() throws {
        let expression = try ScheduleExpression.parse(kind: .every, text: "15m")
        let start = Date(timeIntervalSince1970: 1_800_000_123.4)
        let times = expression.occurrences(
            after: start, through: start.addingTimeInterval(3600), in: Self.berlin,
            limit: 10)
        #expect(times.map(\.timeIntervalSince1970) == [1_800_000_900, 1_800_001_800, 1_800_002_700, 1_800_003_600])
        #expect(
            expression.next(after: Date(timeIntervalSince1970: 1_800_000_900), in: Self.utc)
                == Date(timeIntervalSince1970: 1_800_001_800))
        #expect(
            expression.previous(atOrBefore: Date(timeIntervalSince1970: 1_800_000_900), in: Self.utc)
                == Date(timeIntervalSince1970: 1_800_000_900))
        let odd = try ScheduleExpression.parse(kind: .every, text: "7s")
        #expect(odd.next(after: Date(timeIntervalSince1970: 0), in: Self.utc) == Date(timeIntervalSince1970: 7))
        #expect(odd.text == "7s" && expression.description == "every: 15m")
    }

    // MARK: previous, occurrences

    static let expressions: [(ScheduleKind, String)] = [
        (.cron, "*/15 * * * *"), (.cron, "30 2 * * *"), (.cron, "0 0 29 2 *"), (.cron, "0 9 * * mon-fri"),
        (.calendar, "*-*-* 02:30"), (.calendar, "Mon..Fri 09:00"), (.calendar, "*:0/20"), (.calendar, "*-02~01"),
        (.calendar, "*:0/10:0/7.5"), (.every, "45m"), (.every, "1d"),
    ]

    /// Walking back with previous() finds exactly what walking forward with
    /// next() found, across a spring and an autumn clock change in Berlin —
    /// except for calendar events in the autumn overlap, where systemd's
    /// search fires the repeated hour only when it starts inside it: there
    /// previous() may return such a time, but always one with no other
    /// occurrence between it and the bound.
    @Test(arguments: expressions)
    func previousWalksBackWhatNextWalksForward(_ kind: ScheduleKind, _ text: String) throws {
        let expression = try ScheduleExpression.parse(kind: kind, text: text)
        for (start, isAutumn) in [(1_806_184_800.0, false) /* 2027-03-27T22:00Z */, (1_824_933_600, true)] {
            let from = Date(timeIntervalSince1970: start)
            let through = from.addingTimeInterval(6 * 3600)
            let forward = expression.occurrences(after: from, through: through, in: Self.berlin, limit: 1_000)
            #expect(forward.count < 1_000)
            let previous = try #require(expression.previous(atOrBefore: through, in: Self.berlin))
            #expect(previous <= through)
            #expect(try #require(expression.next(after: previous, in: Self.berlin)) > through)
            guard !(kind == .calendar && isAutumn) else { continue }
            let backward = expression.latestOccurrences(after: from, through: through, in: Self.berlin, limit: 1_000)
            #expect(forward == backward, "\(text) from \(start)")
            #expect(forward.last.map { previous == $0 } ?? (previous <= from))
        }
    }

    @Test func occurrencesAreCappedAtTheEarliestOrTheLatest() throws {
        let expression = try ScheduleExpression.parse(kind: .cron, text: "0 * * * *")
        let from = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z
        let through = from.addingTimeInterval(10 * 3600)
        let first = expression.occurrences(after: from, through: through, in: Self.utc, limit: 3)
        let last = expression.latestOccurrences(after: from, through: through, in: Self.utc, limit: 3)
        #expect(first.map(\.timeIntervalSince1970) == [1_800_003_600, 1_800_007_200, 1_800_010_800])
        #expect(last.map(\.timeIntervalSince1970) == [1_800_028_800, 1_800_032_400, 1_800_036_000])
        #expect(expression.occurrences(after: from, through: from, in: Self.utc, limit: 3).isEmpty)
    }

    @Test func nextIsStrictlyAfter() throws {
        let on = Date(timeIntervalSince1970: 1_800_000_000)  // 08:00:00Z exactly
        for (kind, text) in [(ScheduleKind.cron, "0 * * * *"), (.calendar, "*:00"), (.every, "1h")] {
            let expression = try ScheduleExpression.parse(kind: kind, text: text)
            #expect(expression.next(after: on, in: Self.utc) == on.addingTimeInterval(3600), "\(text)")
            #expect(expression.next(after: on.addingTimeInterval(-0.001), in: Self.utc) == on, "\(text)")
        }
    }

    @Test func calendarEventsEndIn2199AsSystemdsDo() throws {
        let expression = try ScheduleExpression.parse(kind: .calendar, text: "yearly")
        let late = Date(timeIntervalSince1970: 7_226_000_000)  // 2198-12-27
        #expect(expression.next(after: late, in: Self.utc) == Date(timeIntervalSince1970: 7_226_582_400))
        #expect(expression.next(after: Date(timeIntervalSince1970: 7_226_582_400), in: Self.utc) == nil)
    }

    // MARK: The floor of one second, for every kind

    /// A calendar event whose seconds may fire less than a second apart is
    /// refused as a schedule, at the item of the seconds field at fault
    /// (0-based column); systemd's own reading (``CalendarEvent/init(parsing:)``)
    /// still accepts it.
    @Test(arguments: [
        ("*-*-* *:*:00/0.001", 10, "/0.001 fires more often"),
        ("*-*-* *:*:00/0.000001", 10, "/0.000001 fires more often"),
        ("*:*:0/0.5", 4, "/0.5 fires more often"),
        ("*:*:10,10.5", 7, "10.5 is 0.5s after 10"),
        ("*:*:30.2,05..20/1,20.7", 18, "20.7 is 0.7s after 20"),
        ("*:*:00,59.5", 7, "59.5 is 0.5s before 0 of the next minute"),
        ("*:*:0/2,59.5", 8, "59.5 is 0.5s before 0 of the next minute"),
    ])
    func calendarOccurrencesLessThanASecondApartAreRefused(_ example: (String, Int, String)) throws {
        _ = try CalendarEvent(parsing: example.0)
        #expect {
            _ = try ScheduleExpression.parse(kind: .calendar, text: example.0)
        } throws: { error in
            guard let error = error as? ScheduleParseError else { return false }
            return error.code == .outOfRange && error.field == "second" && error.column == example.1
                && error.reason.contains(example.2) && error.reason.contains("1s")
        }
    }

    @Test(arguments: [
        "*:*:*", "*:*:00/1", "*:*:0.5/1", "*-*-* *:*:00.5", "*:*:00,01,59", "*:*:10,11.25,12.5",
        "minutely", "@1900000000",
    ])
    func calendarOccurrencesASecondApartOrMoreAreAccepted(_ text: String) throws {
        let expression = try ScheduleExpression.parse(kind: .calendar, text: text)
        var times: [Date] = []
        var cursor = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<120 {
            guard let next = expression.next(after: cursor, in: Self.utc) else { break }
            times.append(next)
            cursor = next
        }
        #expect(zip(times, times.dropFirst()).allSatisfy { $1.timeIntervalSince($0) >= 1 }, "\(times)")
    }
}
