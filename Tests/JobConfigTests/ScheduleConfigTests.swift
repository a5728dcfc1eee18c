import Foundation
import JobCalendar
import Testing

@testable import JobConfig

/// `schedule:` in a job definition: every form, every default,
/// and every mistake reported at its file:line:column.
@Suite struct ScheduleConfigTests {
    static let pipeline = "pipeline:\n  - then: a\n    run: [true]\n"

    @Test func aScheduleWithEveryKey() throws {
        let definition = try checkDefinition(
            """
            schedule:
              cron: "*/15 * * * *"
              timezone: Europe/Berlin
              catch-up: all
              overlap: queue
              jitter: 30s
              input: hello
            \(Self.pipeline)
            """
        ).get()
        let schedule = try #require(definition.schedules.first)
        #expect(definition.schedules.count == 1)
        #expect(schedule.expression == (try ScheduleExpression.parse(kind: .cron, text: "*/15 * * * *")))
        #expect(schedule.timeZone?.identifier == "Europe/Berlin")
        #expect(schedule.catchUp == .all && schedule.overlap == .queue)
        #expect(schedule.jitter == .seconds(30))
        #expect(schedule.input == Data("hello".utf8))
        #expect(schedule.key == "cron: */15 * * * * @Europe/Berlin")
    }

    @Test func aListAndTheDefaults() throws {
        let definition = try checkDefinition(
            """
            schedule:
              - calendar: "Mon..Fri *-*-* 09:00"
              - every: 15m
            \(Self.pipeline)
            """
        ).get()
        #expect(definition.schedules.map(\.expression.kind) == [.calendar, .every])
        for schedule in definition.schedules {
            #expect(schedule.catchUp == .latest && schedule.overlap == .skip)
            #expect(schedule.jitter == nil && schedule.timeZone == nil && schedule.input.isEmpty)
        }
    }

    @Test(arguments: [
        // A bad field: the column of the field in the file (quoted: after the quote).
        ("schedule:\n  cron: \"*/15 25 * * *\"\n", 2, 15, "hour"),
        ("schedule:\n  cron: 61 * * * *\n", 2, 9, "minute"),
        ("schedule:\n  calendar: \"Mon..Fri *-*-* 25:00\"\n", 2, 0, "calendar"),
        ("schedule:\n  every: 500ms\n", 2, 0, "at least 1s"),
        ("schedule:\n  calendar: \"*-*-* *:*:00/0.001\"\n", 2, 24, "a schedule fires at most once a second"),
        ("schedule:\n  calendar: '*:*:10,10.5'\n", 2, 21, "10.5 is 0.5s after 10"),
        ("schedule:\n  every: 15m\n  timezone: Mars/Olympus\n", 3, 13, "unknown time zone"),
        ("schedule:\n  cron: \"* * * * *\"\n  every: 1m\n", 2, 3, "exactly one of"),
        ("schedule:\n  timezone: UTC\n", 2, 3, "exactly one of"),
        ("schedule:\n  every: 1m\n  overlap: sometimes\n", 3, 12, "use one of skip, queue, allow"),
        ("schedule:\n  every: 1m\n  catch-up: most\n", 3, 13, "use one of none, latest, all"),
        ("schedule:\n  every: 1m\n  cron-ish: x\n", 3, 3, "unknown key"),
        ("schedule:\n  every: 15m\n  timezone: Europe//Berlin\n", 3, 13, "not a name of the tz database"),
    ])
    func mistakesAreReportedWhereTheyAre(yaml: String, line: Int, column: Int, text: String) {
        let result = checkDefinition(yaml + Self.pipeline)
        #expect(result.value == nil)
        let match = result.diagnostics.first { $0.position.line == line && $0.message.contains(text) }
        #expect(match != nil, "\(result.diagnostics)")
        if column > 0 { #expect(match?.position.column == column, "\(result.diagnostics)") }
    }

    @Test func jitterIsTheSameOnEveryHostAndWithinItsBound() {
        let schedule = ScheduleDefinition(
            expression: .every(.seconds(60)), jitter: .seconds(30), sourcePosition: .file("/x.yaml"))
        let occurrence = Date(timeIntervalSince1970: 1_800_000_000)
        let offset = schedule.jitterOffset(definition: "report", occurrence: occurrence)
        #expect(offset == schedule.jitterOffset(definition: "report", occurrence: occurrence))
        let offsets = (0..<200).map {
            schedule.jitterOffset(definition: "report", occurrence: occurrence + Double($0) * 60)
        }
        #expect(offsets.allSatisfy { $0 >= .zero && $0 < .seconds(30) })
        #expect(Set(offsets).count > 100, "spread over the window")
    }

    /// An input no job could be stored with is an error of the definition,
    /// at the input, not a failure at every occurrence.
    @Test func anInputOverTheValueCapIsAnError() throws {
        let context = DefinitionContext(queues: ["map", "return"], pools: ["default"], valueCap: 1024)
        let big = String(repeating: "x", count: 2000)
        let result = DefinitionLoader(context: context).parse(
            yaml: "schedule:\n  every: 2s\n  input: \(big)\n" + Self.pipeline, path: "/defs/abig.yaml")
        #expect(result.value == nil)
        expectDiagnostic(
            result.diagnostics, .invalidValue, line: 3, column: 10,
            contains: "the input is 2000 bytes, over store.value-cap (1KiB in jobd.yaml)")
        let fits = DefinitionLoader(context: context).parse(
            yaml: "schedule:\n  every: 2s\n  input: \(String(repeating: "x", count: 1024))\n" + Self.pipeline,
            path: "/defs/fits.yaml")
        #expect(fits.value != nil, "\(fits.diagnostics)")
    }

    /// An expression with no occurrence after now loads, with a warning.
    @Test(arguments: [
        ("calendar: \"*-02-30 00:00\"", 13),
        ("calendar: \"2023-02-29\"", 13),
        ("calendar: \"@1500000000\"", 13),
        ("cron: \"0 0 30 2 *\"", 9),
    ])
    func anExpressionThatNeverFiresIsAWarning(_ schedule: String, _ column: Int) throws {
        let result = checkDefinition("schedule:\n  \(schedule)\n" + Self.pipeline)
        #expect(result.value != nil, "\(result.diagnostics)")
        #expect(result.diagnostics.allSatisfy { $0.severity == .warning })
        expectDiagnostic(
            result.diagnostics, .scheduleNeverFires, line: 2, column: column, contains: "this schedule never fires")
    }

    @Test func anExpressionThatFiresHasNoWarning() throws {
        let result = checkDefinition("schedule:\n  calendar: \"*-02-28 00:00\"\n" + Self.pipeline)
        #expect(result.value != nil && result.diagnostics.isEmpty, "\(result.diagnostics)")
    }

    /// A TZ jobd cannot read is a warning at the first schedule that reads
    /// the host's zone, naming how many do.
    @Test func anUnusableTZIsAWarningWhereTheHostZoneIsRead() throws {
        let set = DefinitionLoader().loadFiles([])
        #expect(
            Configuration.hostZoneProblem(set.definitions, host: HostTimeZone(environment: ["TZ": "Nowhere/Land"]))
                == nil,
            "no schedule, no warning")
        let named = try checkDefinition(
            "schedule:\n  cron: \"0 9 * * *\"\n  timezone: UTC\n" + Self.pipeline, path: "/defs/a.yaml"
        ).get()
        let every = try checkDefinition("schedule:\n  every: 1h\n" + Self.pipeline, path: "/defs/b.yaml").get()
        let host = try checkDefinition(
            "schedule:\n  - every: 1h\n  - cron: \"0 9 * * *\"\n" + Self.pipeline, path: "/defs/c.yaml"
        ).get()
        let unusable = HostTimeZone(environment: ["TZ": "Nowhere/Land"])
        #expect(Configuration.hostZoneProblem([named, every], host: unusable) == nil, "none reads the host's zone")
        let warning = try #require(Configuration.hostZoneProblem([named, every, host], host: unusable))
        #expect(warning.severity == .warning && warning.code == .unusableTZ)
        #expect(warning.position == SourcePosition(path: "/defs/c.yaml", line: 3, column: 5))
        #expect(warning.message.hasPrefix("TZ=\"Nowhere/Land\" is not in /usr/share/zoneinfo"))
        #expect(warning.message.hasSuffix("(1 schedule(s) have none)"))
        #expect(Configuration.hostZoneProblem([host], host: HostTimeZone(environment: ["TZ": ":Asia/Kolkata"])) == nil)
    }

    /// timezone: on an expression that does not read it is a warning.
    @Test(arguments: ["every: 1d", "calendar: \"*-*-* 09:00 America/New_York\""])
    func aTimezoneWithNoEffectIsAWarning(_ expression: String) throws {
        let result = checkDefinition("schedule:\n  \(expression)\n  timezone: Europe/Berlin\n" + Self.pipeline)
        #expect(result.value != nil, "\(result.diagnostics)")
        expectDiagnostic(
            result.diagnostics, .invalidValue, line: 3, column: 13, contains: "timezone: has no effect here")
        #expect(result.diagnostics.allSatisfy { $0.severity == .warning })
        let cron = checkDefinition("schedule:\n  cron: \"0 9 * * *\"\n  timezone: Europe/Berlin\n" + Self.pipeline)
        #expect(cron.value != nil && cron.diagnostics.isEmpty, "\(cron.diagnostics)")
    }

    /// Copies of one schedule (YAML aliases make 20,000 of them in a line)
    /// collapse into one, with one warning; different schedules past the
    /// cap are refused at `schedule:`.
    @Test func copiesOfAScheduleCollapseIntoOne() throws {
        let aliases = Array(repeating: "*s", count: 2_000).joined(separator: ", ")
        let result = checkDefinition(
            "schedule: [&s {every: 1s}, *s, {every: 1s, input: x}, \(aliases)]\n" + Self.pipeline)
        let definition = try result.get()
        #expect(definition.schedules.map(\.input) == [Data(), Data("x".utf8)])
        expectDiagnostic(
            result.diagnostics, .duplicateSchedule, line: 1,
            contains: "schedule every: 1s is listed 2002 times in this definition with the same options")
        #expect(result.diagnostics.allSatisfy { $0.severity == .warning }, "\(result.diagnostics)")
    }

    @Test func moreSchedulesThanTheCapAreRefused() {
        let most = ScheduleDefinition.maxPerDefinition
        let list = { (count: Int) in (1...count).map { "{every: \($0)s}" }.joined(separator: ", ") }
        #expect(checkDefinition("schedule: [\(list(most))]\n" + Self.pipeline).value?.schedules.count == most)
        let result = checkDefinition("schedule: [\(list(most + 1))]\n" + Self.pipeline)
        #expect(result.value == nil)
        expectDiagnostic(
            result.diagnostics, .tooManySchedules, line: 1, column: 11,
            contains: "\(most + 1) different schedules in one definition, over the \(most)")
    }
}
