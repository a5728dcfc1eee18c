import Foundation
import Testing

/// `jobctl calendar`: the built binary, end to end.
@Suite struct CalendarCommandTests {
    func calendar(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildResult {
        try await runChild(jobctlPath, ["calendar"] + arguments, environment: environment, directory: "/")
    }

    @Test func cronInAZoneOneTimeALine() async throws {
        let result = try await calendar(["--cron", "*/15 9-17 * * mon-fri", "--timezone", "Europe/Berlin",
                                         "--from", "2026-11-24T16:20:00Z", "--count", "4"])
        #expect(result.status == 0, "\(result)")
        #expect(result.outLines == ["2026-11-24T16:30:00Z", "2026-11-24T16:45:00Z", "2026-11-25T08:00:00Z",
                                    "2026-11-25T08:15:00Z"])
        #expect(result.stderr.isEmpty)
    }

    @Test func calendarWithItsOwnZoneAsJSON() async throws {
        let result = try await calendar(["--calendar", "Mon..Fri *-*-* 09:00 America/New_York", "--timezone",
                                         "Asia/Tokyo", "--from", "2026-11-27T12:00:00+01:00", "--count", "3", "--json"])
        #expect(result.status == 0, "\(result)")
        let times = try #require(try result.json()["times"] as? [String])
        #expect(times == ["2026-11-27T14:00:00Z", "2026-11-30T14:00:00Z", "2026-12-01T14:00:00Z"])
    }

    @Test func everyIgnoresZonesAndDefaultsToFiveTimes() async throws {
        let result = try await calendar(["--every", "90m", "--from", "2026-11-24T00:00:00Z"],
                                        environment: ["TZ": "Australia/Lord_Howe"])
        #expect(result.status == 0, "\(result)")
        #expect(result.outLines == ["2026-11-24T01:30:00Z", "2026-11-24T03:00:00Z", "2026-11-24T04:30:00Z",
                                    "2026-11-24T06:00:00Z", "2026-11-24T07:30:00Z"])
    }

    @Test func theDefaultZoneIsTheHosts() async throws {
        let result = try await calendar(["--cron", "0 9 * * *", "--from", "2026-11-23T20:00:00Z", "--count", "1"],
                                        environment: ["TZ": "Asia/Tokyo"])
        #expect(result.outLines == ["2026-11-24T00:00:00Z"], "\(result)")
    }

    @Test func fractionalSecondsAndAnExpressionThatStops() async throws {
        let fractions = try await calendar(["--calendar", "*:*:0/7.5", "--from", "2026-11-24T00:00:00Z",
                                            "--count", "2"])
        #expect(fractions.outLines == ["2026-11-24T00:00:07.5Z", "2026-11-24T00:00:15Z"], "\(fractions)")
        let stops = try await calendar(["--calendar", "2027-01-01 00:00", "--from", "2026-11-24T00:00:00Z"])
        #expect(stops.status == 0, "\(stops)")
        #expect(stops.outLines == ["2027-01-01T00:00:00Z"])
        #expect(stops.errLines == ["jobctl: 2027-01-01 00:00 fires no more after 2027-01-01T00:00:00Z"])
    }

    @Test func helpHasExamples() async throws {
        let result = try await runChild(jobctlPath, ["help", "calendar"], directory: "/")
        #expect(result.status == 0, "\(result)")
        for text in ["Examples:", "jobctl calendar --cron", "--timezone", "--from", "--count", "--json"] {
            #expect(result.out.contains(text), "\(text)")
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var says: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let refusals: [Refusal] = [
        Refusal(arguments: ["--cron", "61 * * * *"],
                says: "invalid cron expression \"61 * * * *\": minute at column 1: 61 is out of range 0–59"),
        Refusal(arguments: ["--calendar", "*-*-* 25:00"],
                says: "invalid calendar expression \"*-*-* 25:00\": hour at column 7: 25 is out of range 0–23"),
        Refusal(arguments: ["--every", "500ms"], says: "an interval must be at least 1s"),
        Refusal(arguments: ["--cron", "0 0 * * *", "--timezone", "Mars/Base"], says: "unknown time zone \"Mars/Base\""),
        Refusal(arguments: ["--cron", "0 0 * * *", "--from", "yesterday"], says: "invalid --from \"yesterday\""),
        Refusal(arguments: ["--cron", "0 0 * * *", "--count", "0"], says: "--count must be within 1…1000, not 0"),
        Refusal(arguments: ["--cron", "0 0 * * *", "--count", "1001"], says: "--count must be within 1…1000"),
        Refusal(arguments: ["--cron", "0 0 * * *", "--every", "5m"], says: "give one of --cron, --calendar and --every"),
        Refusal(arguments: [], says: "give one of --cron, --calendar and --every"),
    ]

    @Test(arguments: refusals)
    func refusedWithOneLineAndExit64(_ refusal: Refusal) async throws {
        let result = try await calendar(refusal.arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.out.isEmpty)
        #expect(result.errLines.count == 1 && result.errLines.first?.hasPrefix("jobctl: error: ") == true, "\(result)")
        #expect(result.stderr.contains(refusal.says), "\(result)")
    }
}
