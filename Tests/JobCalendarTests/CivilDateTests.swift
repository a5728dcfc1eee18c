import Foundation
import Testing

@testable import JobCalendar

@Suite struct CivilDateTests {
    @Test func daysRoundTripAgainstFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // From 1700 on: before 1582 Foundation's calendar is Julian.
        for days in stride(from: Int64(-98_000), through: 2_900_000, by: 997) {
            let date = CivilDate.date(days: days)
            #expect(CivilDate.days(year: date.year, month: date.month, day: date.day) == days)
            let components = calendar.dateComponents(
                [.year, .month, .day, .weekday],
                from: Date(timeIntervalSince1970: TimeInterval(days) * 86_400))
            #expect(components.year == date.year && components.month == date.month && components.day == date.day)
            #expect(components.weekday == CivilDate.weekday(days: days) + 1)
        }
    }

    @Test func outOfRangeFieldsCarryOverAsMktimeDoes() {
        #expect(CivilDate.days(year: 2024, month: 13, day: 1) == CivilDate.days(year: 2025, month: 1, day: 1))
        #expect(CivilDate.days(year: 2024, month: 0, day: 1) == CivilDate.days(year: 2023, month: 12, day: 1))
        #expect(CivilDate.days(year: 2024, month: 3, day: 0) == CivilDate.days(year: 2024, month: 2, day: 29))
        #expect(CivilDate.days(year: 2023, month: 2, day: 29) == CivilDate.days(year: 2023, month: 3, day: 1))
        #expect(CivilDate.days(year: 2024, month: -11, day: 1) == CivilDate.days(year: 2023, month: 1, day: 1))
        #expect(
            WallTime(year: 2024, month: 12, day: 31, hour: 23, minute: 60).localSeconds
                == WallTime(year: 2025, month: 1, day: 1).localSeconds)
    }
}
