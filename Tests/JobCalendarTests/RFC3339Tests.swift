import Foundation
import JobCalendar
import Testing

/// RFC 3339 times: what `jobctl calendar --from` reads and jobd's log prints.
@Suite struct RFC3339Tests {
    @Test(arguments: [
        ("2026-11-24T09:00:00Z", 1_795_510_800.0),
        ("2026-11-24T10:00:00+01:00", 1_795_510_800),
        ("2026-11-24T04:30:00-04:30", 1_795_510_800),
        ("2026-11-24t09:00:00z", 1_795_510_800),
        ("2026-11-24T09:00:00.5Z", 1_795_510_800.5),
        ("2026-11-24T09:00:00.000250Z", 1_795_510_800.000_25),
        ("2024-02-29T00:00:00Z", 1_709_164_800),
        ("0001-01-01T00:00:00Z", -62_135_596_800),
    ])
    func readsValidTimes(_ text: String, _ seconds: Double) throws {
        let date = try RFC3339.date(text)
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001, "\(text): \(date.timeIntervalSince1970)")
    }

    @Test(arguments: [
        ("2026-11-26T12:00:00+25:00", "the offset's hours are 25, over 23"),
        ("2026-11-26T12:00:00+24:00", "the offset's hours are 24, over 23"),
        ("2026-11-26T12:00:00+99:99", "the offset's hours are 99, over 23"),
        ("2026-11-26T12:00:00-25:00", "the offset's hours are 25, over 23"),
        ("2026-11-26T12:00:00+01:60", "the offset's minutes are 60, over 59"),
        ("2026-11-31T00:00:00Z", "day 31 is out of range 01–30 for 2026-11"),
        ("2026-02-30T00:00:00Z", "day 30 is out of range 01–28 for 2026-02"),
        ("2026-02-29T00:00:00Z", "day 29 is out of range 01–28 for 2026-02"),
        ("2026-13-01T00:00:00Z", "month 13 is out of range 01–12"),
        ("2026-11-26T25:00:00Z", "hour 25 is out of range 00–23"),
        ("2026-11-26T12:60:00Z", "minute 60 is out of range 00–59"),
        ("2026-11-26T23:59:60Z", "second 60 is out of range 00–59"),
        ("2026-11-26 12:00:00Z", "a 'T' must separate the date from the time"),
        ("2026-11-26T12:00:00", "the time must end with Z or an offset"),
        ("2026-11-26T12:00Z", "expected ':' after the minute"),
        ("2026-11-26T12:00:00.Z", "a '.' must be followed by the fraction's digits"),
        ("2026-11-26T12:00:00Zjunk", "unexpected text after the offset"),
        ("26-11-26T12:00:00Z", "the year must have 4 digits"),
        ("", "the year must have 4 digits"),
    ])
    func refusesInvalidTimesSayingWhy(_ text: String, _ reason: String) {
        #expect {
            _ = try RFC3339.date(text)
        } throws: { error in
            (error as? RFC3339.ParseError)?.reason.contains(reason) == true
        }
    }

    @Test func printsUTCWithTheFractionOnlyWhenThereIsOne() throws {
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_795_510_800)) == "2026-11-24T09:00:00Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_795_510_807.5)) == "2026-11-24T09:00:07.5Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_795_510_800.000_001)) == "2026-11-24T09:00:00.000001Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: -1.5)) == "1969-12-31T23:59:58.5Z")
        for text in ["2026-11-24T09:00:07.25Z", "1999-12-31T23:59:59Z", "2199-12-31T23:59:59.999999Z"] {
            #expect(RFC3339.string(try RFC3339.date(text)) == text)
        }
    }
}
