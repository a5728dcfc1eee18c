import Foundation
import JobConfig
import JobControl
import TestSupport
import Testing

/// `jobd --check`: every problem with file:line, exit 0 or 1, and the
/// database untouched.
@Suite struct CheckTests {
    @Test func aGoodConfigurationPassesWithoutCreatingTheDatabase() throws {
        let harness = try DaemonHarness(definitions: ["fine": "pipeline:\n  - map: up\n    transform: upper\n"])
        let result = try runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("ok: \(harness.configPath): 1 definition(s): fine"))
        #expect(!FileManager.default.fileExists(atPath: harness.databasePath))
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/state"))
    }

    @Test func everyProblemIsReportedWithFileAndLine() throws {
        let harness = try DaemonHarness(
            yaml: "colour: blue\npools: { default: zero }",
            definitions: [
                "two-kinds": "pipeline:\n  - map: a\n    then: b\n    transform: upper\n",
                "bad-time": "timeout: soon\npipeline:\n  - then: x\n    run: [true]\n",
            ])
        let result = try runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(result.status == 1)
        let output = result.output
        #expect(output.contains("\(harness.configPath):7"), "the unknown key `colour`: \(output)")
        #expect(output.contains("colour"))
        #expect(output.contains("\(harness.configPath):8"), "the pool size")
        #expect(output.contains("jobs.d/two-kinds.yaml:3"), "two kinds in one stage (the second kind's line)")
        #expect(output.contains("jobs.d/bad-time.yaml:1"), "the bad duration")
        #expect(output.contains("error(s) in \(harness.configPath)"))
        #expect(!FileManager.default.fileExists(atPath: harness.databasePath))
    }

    /// A schedule whose jobs the store could not hold (its input over
    /// store.value-cap) is an error at its file:line:col; one that never
    /// fires, and a TZ jobd cannot read, are warnings.
    @Test func scheduleProblemsAreReportedWhereTheyAre() throws {
        let big = String(repeating: "x", count: 2000)
        let harness = try DaemonHarness(
            yaml: "store: { value-cap: 1KiB }",
            definitions: [
                "abig":
                    "schedule: { every: 2s, overlap: allow, input: \"\(big)\" }\npipeline:\n  - then: x\n    run: [true]\n",
                "bsmall": "schedule: { every: 2s, overlap: allow }\npipeline:\n  - then: x\n    run: [true]\n",
            ])
        let refused = try runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.output.contains(
                "jobs.d/abig.yaml:1:47: error: the input is 2000 bytes, over store.value-cap (1KiB in jobd.yaml)"),
            "\(refused.output)")

        let warned = try DaemonHarness(definitions: [
            "never": "schedule:\n  calendar: \"*-02-30 00:00\"\npipeline:\n  - then: x\n    run: [true]\n",
            "local": "schedule:\n  cron: \"0 9 * * *\"\npipeline:\n  - then: x\n    run: [true]\n",
        ])
        let result = try runCommand(
            jobdPath, ["--check", "--config", warned.configPath], environment: ["TZ": "Nowhere/Land"])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.output.contains(
                "jobs.d/never.yaml:2:13: warning: calendar expression \"*-02-30 00:00\" has no occurrence after now"),
            "\(result.output)")
        #expect(
            result.output.contains("warning: TZ=\"Nowhere/Land\" is not in /usr/share/zoneinfo"), "\(result.output)")
        #expect(result.output.contains("2 definition(s): local, never; 2 warning(s)"), "\(result.output)")
    }

    /// Many definitions are summarised on the `ok` line, not all listed.
    @Test func manyDefinitionsAreSummarised() throws {
        let names = (0..<25).map { String(format: "d%02d", $0) }
        let harness = try DaemonHarness(
            definitions: Dictionary(
                uniqueKeysWithValues: names.map {
                    ($0, "pipeline:\n  - map: up\n    transform: upper\n")
                }))
        let result = try runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("ok: \(harness.configPath): 25 definition(s): d00, d01, "), "\(result.output)")
        #expect(result.output.contains(", d19 and 5 more\n"), "\(result.output)")
        #expect(!result.output.contains("d20"), "\(result.output)")
    }

    @Test func aMissingExplicitConfigIsAnError() throws {
        let result = try runCommand(jobdPath, ["--check", "--config", "/nonexistent/jobd.yaml"])
        #expect(result.status == 1)
        #expect(result.error.contains("/nonexistent/jobd.yaml"))
    }

    @Test func startingWithABrokenConfigurationExitsWithEXCONFIG() throws {
        let harness = try DaemonHarness(definitions: ["broken": "pipeline: []\n"])
        let result = try runCommand(jobdPath, ["--config", harness.configPath])
        #expect(result.status == 78)
        #expect(result.error.contains("jobs.d/broken.yaml:1"))
        #expect(result.error.contains("not started"))
        #expect(!FileManager.default.fileExists(atPath: harness.databasePath))
    }

    @Test func theRepositoryConfigurationChecksClean() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let result = try runCommand(jobdPath, ["--check", "--config", root + "/config/jobd.yaml"])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func versionAndUsage() throws {
        #expect(try runCommand(jobdPath, ["--version"]).output == JobdVersion.string + "\n")
        let bad = try runCommand(jobdPath, ["--bogus"])
        #expect(bad.status == 64)
        #expect(bad.error.contains("--bogus"))
    }
}
