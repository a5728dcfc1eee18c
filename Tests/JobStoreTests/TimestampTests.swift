import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(951_782_400_123), "2000-02-29T00:00:00.123Z"),
        (Int64(1_795_651_200_999), "2026-11-26T00:00:00.999Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
        (Int64(4_102_444_799_000), "2099-12-31T23:59:59.000Z"),
    ])
    func formatsKnownInstants(milliseconds: Int64, text: String) {
        #expect(Timestamp.text(milliseconds: milliseconds) == text)
        #expect(Timestamp.date(text).map(Timestamp.milliseconds) == milliseconds)
    }

    @Test func roundTripsEveryDayForFourHundredYearsAndKeepsOrder() {
        var previous = ""
        var ms: Int64 = -5_000_000_000_000
        while ms < 8_000_000_000_000 {
            let text = Timestamp.text(milliseconds: ms)
            #expect(text.utf8.count == 24)
            #expect(Timestamp.date(text).map(Timestamp.milliseconds) == ms)
            #expect(previous < text)
            previous = text
            ms += 86_400_000 + 3_601_007
        }
    }

    @Test func parsesSQLiteOwnFormats() {
        #expect(Timestamp.date("2026-11-21 05:54:03").map(Timestamp.milliseconds) == 1_795_240_443_000)
        #expect(Timestamp.date("2026-11-21T05:54:03.5Z").map(Timestamp.milliseconds) == 1_795_240_443_500)
        #expect(Timestamp.date("yesterday") == nil)
        #expect(Timestamp.date("2026-13-01T00:00:00Z") == nil)
    }
}
