import Foundation
import Testing

/// `jobctl calendar`: the built binary, end to end.
@Suite struct CalendarCommandTests {
    func calendar(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildResult {
        try await runChild(jobctlPath, ["calendar"] + arguments, environment: environment, directory: "/")
    }

    @Test func cronInAZoneOneTimeALine() async throws {
        let result = try await calendar([
            "--cron", "*/15 9-17 * * mon-fri", "--timezone", "Europe/Berlin",
            "--from", "2026-11-24T16:20:00Z", "--count", "4",
        ])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.outLines == [
                "2026-11-24T16:30:00Z", "2026-11-24T16:45:00Z", "2026-11-25T08:00:00Z",
                "2026-11-25T08:15:00Z",
            ])
        #expect(result.stderr.isEmpty)
    }

    @Test func calendarWithItsOwnZoneAsJSON() async throws {
        let result = try await calendar([
            "--calendar", "Mon..Fri *-*-* 09:00 America/New_York", "--timezone",
            "Asia/Tokyo", "--from", "2026-11-27T12:00:00+01:00", "--count", "3", "--json",
        ])
        #expect(result.status == 0, "\(result)")
        let times = try #require(try result.json()["times"] as? [String])
        #expect(times == ["2026-11-27T14:00:00Z", "2026-11-30T14:00:00Z", "2026-12-01T14:00:00Z"])
    }

    @Test func everyIgnoresZonesAndDefaultsToFiveTimes() async throws {
        let result = try await calendar(
            ["--every", "90m", "--from", "2026-11-24T00:00:00Z"],
            environment: ["TZ": "Australia/Lord_Howe"])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.outLines == [
                "2026-11-24T01:30:00Z", "2026-11-24T03:00:00Z", "2026-11-24T04:30:00Z",
                "2026-11-24T06:00:00Z", "2026-11-24T07:30:00Z",
            ])
    }

    @Test func theDefaultZoneIsTheHosts() async throws {
        let result = try await calendar(
            ["--cron", "0 9 * * *", "--from", "2026-11-23T20:00:00Z", "--count", "1"],
            environment: ["TZ": "Asia/Tokyo"])
        #expect(result.outLines == ["2026-11-24T00:00:00Z"], "\(result)")
    }

    @Test func fractionalSecondsAndAnExpressionThatStops() async throws {
        let fractions = try await calendar([
            "--calendar", "*:*:0/7.5", "--from", "2026-11-24T00:00:00Z",
            "--count", "2",
        ])
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
        Refusal(
            arguments: ["--cron", "61 * * * *"],
            says: "invalid cron expression \"61 * * * *\": minute at column 1: 61 is out of range 0–59"),
        Refusal(
            arguments: ["--calendar", "*-*-* 25:00"],
            says: "invalid calendar expression \"*-*-* 25:00\": hour at column 7: 25 is out of range 0–23"),
        Refusal(arguments: ["--every", "500ms"], says: "an interval must be at least 1s"),
        Refusal(
            arguments: ["--cron", "0 0 * * *", "--timezone", "Mars/Base"], says: "unknown time zone \"Mars/Base\""),
        Refusal(arguments: ["--cron", "0 0 * * *", "--from", "yesterday"], says: "invalid --from \"yesterday\""),
        Refusal(arguments: ["--cron", "0 0 * * *", "--count", "0"], says: "--count must be within 1…1000, not 0"),
        Refusal(arguments: ["--cron", "0 0 * * *", "--count", "1001"], says: "--count must be within 1…1000"),
        Refusal(
            arguments: ["--cron", "0 0 * * *", "--every", "5m"], says: "give one of --cron, --calendar and --every"),
        Refusal(arguments: [], says: "give one of --cron, --calendar and --every"),
        // Times that do not exist: refused, not carried over into another.
        Refusal(
            arguments: ["--every", "1m", "--from", "2026-11-26T12:00:00+25:00"],
            says: "invalid --from \"2026-11-26T12:00:00+25:00\": the offset's hours are 25, over 23"),
        Refusal(arguments: ["--every", "1m", "--from", "2026-11-26T12:00:00+99:99"], says: "over 23"),
        Refusal(
            arguments: ["--every", "1m", "--from", "2026-11-31T00:00:00Z"],
            says: "day 31 is out of range 01–30 for 2026-11"),
        Refusal(
            arguments: ["--cron", "0 0 * * *", "--from", "2026-02-30T00:00:00Z"],
            says: "day 30 is out of range 01–28 for 2026-02"),
        // Negative numbers are values, not options.
        Refusal(arguments: ["--cron", "0 0 * * *", "--count", "-1"], says: "--count must be within 1…1000, not -1"),
        Refusal(arguments: ["--cron", "-1 * * * *"], says: "invalid cron expression \"-1 * * * *\""),
        Refusal(
            arguments: ["--cron", "0 0 * * *", "--timezone", "posix/Mars/Base"],
            says: "unknown time zone \"posix/Mars/Base\": not in /usr/share/zoneinfo"),
    ]

    /// glibc's `TZ=:Area/City` is the host's zone; a TZ jobctl cannot read
    /// is said, and /etc/localtime's zone is used.
    @Test func theHostZoneHonoursGlibcsTZForms() async throws {
        let arguments = ["--cron", "0 9 * * *", "--count", "1", "--from", "2026-11-26T00:00:00Z"]
        for tz in [":Europe/Berlin", "Europe/Berlin", ":/usr/share/zoneinfo/Europe/Berlin"] {
            let result = try await calendar(arguments, environment: ["TZ": tz])
            #expect(result.outLines == ["2026-11-26T08:00:00Z"], "TZ=\(tz): \(result)")
            #expect(result.stderr.isEmpty, "TZ=\(tz): \(result)")
        }
        let unusable = try await calendar(arguments, environment: ["TZ": "Nowhere/Land"])
        #expect(unusable.status == 0, "\(unusable)")
        #expect(unusable.errLines.count == 1, "\(unusable)")
        #expect(
            unusable.errLines.first?.hasPrefix("jobctl: TZ=\"Nowhere/Land\" is not in /usr/share/zoneinfo") == true,
            "\(unusable)")
        // Accepted with a zone of its own: TZ plays no part, and is not mentioned.
        let named = try await calendar(
            arguments + ["--timezone", "posix/Europe/Berlin"], environment: ["TZ": "Nowhere/Land"])
        #expect(named.outLines == ["2026-11-26T08:00:00Z"] && named.stderr.isEmpty, "\(named)")
    }

    @Test(arguments: refusals)
    func refusedWithOneLineAndExit64(_ refusal: Refusal) async throws {
        let result = try await calendar(refusal.arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.out.isEmpty)
        #expect(result.errLines.count == 1 && result.errLines.first?.hasPrefix("jobctl: error: ") == true, "\(result)")
        #expect(result.stderr.contains(refusal.says), "\(result)")
    }
}
