import Foundation
import Testing

@testable import JobCalendar

/// The zones schedules are read in: names of the tz database, and the
/// host's zone from `$TZ` as glibc reads it.
@Suite struct TimeZoneTests {
    /// What /etc/localtime names on this host.
    static let localTime = HostTimeZone.localTime()

    @Test(arguments: [
        // glibc's form, with the colon, and without.
        (":Asia/Kolkata", "Asia/Kolkata"),
        ("Asia/Kolkata", "Asia/Kolkata"),
        (":Europe/Berlin", "Europe/Berlin"),
        (":/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"),
        ("/usr/share/zoneinfo/America/New_York", "America/New_York"),
        ("UTC", "UTC"),
    ])
    func tzNamesAZone(_ tz: String, _ expected: String) throws {
        let host = HostTimeZone(environment: ["TZ": tz])
        // Foundation names UTC "GMT": compare with what the name gives.
        #expect(host.zone.identifier == ScheduleTimeZone.named(expected)?.identifier)
        #expect(host.problem == nil)
    }

    @Test func anEmptyTZIsUTCAndAnUnsetOneIsLocalTime() throws {
        #expect(HostTimeZone(environment: ["TZ": ""]).zone.secondsFromGMT() == 0)
        for environment in [[:], ["TZ": ":"], ["TZ": ":/etc/localtime"]] {
            let host = HostTimeZone(environment: environment)
            #expect(host.zone.identifier == Self.localTime.identifier, "\(environment)")
            #expect(host.problem == nil, "\(environment)")
        }
    }

    @Test(arguments: [
        ("CET-1CEST,M3.5.0,M10.5.0/3", "is a POSIX rule string, which jobd does not read"),
        ("<+0530>-5:30", "is a POSIX rule string, which jobd does not read"),
        ("Nowhere/Land", "is not in /usr/share/zoneinfo"),
        (":Nowhere/Land", "is not in /usr/share/zoneinfo"),
        ("/tmp/zone", "is not a zone file of /usr/share/zoneinfo"),
    ])
    func aTZJobdCannotReadIsSaidAndLocalTimeUsed(_ tz: String, _ says: String) throws {
        let host = HostTimeZone(environment: ["TZ": tz])
        #expect(host.zone.identifier == Self.localTime.identifier)
        let problem = try #require(host.problem)
        #expect(
            problem.hasPrefix(
                "TZ=\"\(tz)\" \(says): schedules without timezone: are read in \(Self.localTime.identifier)"),
            "\(problem)")
        #expect(problem.contains("give each schedule a timezone:"))
    }

    /// Files of the tz database that Foundation knows by another name are
    /// read as that zone; a refusal says the true reason.
    @Test func otherNamesOfTheDatabaseAreReadAsTheZoneTheyStandFor() throws {
        #expect(ScheduleTimeZone.named("posix/Europe/Berlin")?.identifier == "Europe/Berlin")
        #expect(ScheduleTimeZone.named("posixrules")?.identifier == "America/New_York")
        #expect(ScheduleTimeZone.named("localtime")?.identifier == Self.localTime.identifier)
        guard case let .failure(missing) = ScheduleTimeZone.lookup("Mars/Olympus") else {
            Issue.record("Mars/Olympus was accepted")
            return
        }
        #expect(missing.reason == "not in /usr/share/zoneinfo")
        guard case let .failure(malformed) = ScheduleTimeZone.lookup("Europe//Berlin") else {
            Issue.record("Europe//Berlin was accepted")
            return
        }
        #expect(malformed.reason == "not a name of the tz database")
    }

    /// A right/ zone counts leap seconds: refused for that reason, whether
    /// or not the system has the right/ tree (Debian ships it in tzdata-legacy).
    @Test func aZoneWithLeapSecondsIsRefusedForThatReason() throws {
        guard case let .failure(error) = ScheduleTimeZone.lookup("right/Europe/Berlin") else {
            Issue.record("right/Europe/Berlin was accepted")
            return
        }
        #expect(error.reason.contains("counts leap seconds"), "\(error)")
        #expect(error.reason.hasSuffix("write Europe/Berlin"), "\(error)")
    }
}
