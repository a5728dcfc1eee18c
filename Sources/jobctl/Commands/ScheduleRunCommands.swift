import ArgumentParser
import Foundation
import JobCalendar
import JobConfig
import JobConfigStore
import JobStore

/// `jobctl schedules [list | run | backfill]`.
struct Schedules: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "List the schedules, fire one now, or fire the occurrences of a range that never fired.",
        discussion: """
            Without a subcommand, lists them (as `schedules list`). Each subcommand takes --json and \
            --config (see jobctl help schedules SUBCOMMAND).

            Examples:
              jobctl schedules
              jobctl schedules run nightly-report
              jobctl schedules backfill nightly-report --from 2026-11-20T00:00:00Z --to 2026-11-23T00:00:00Z --dry-run
            """,
        subcommands: [ScheduleList.self, ScheduleRunCommand.self, ScheduleBackfillCommand.self],
        defaultSubcommand: ScheduleList.self)

    /// The subcommands' names: `jobctl --json schedules run X` moves `--json` after them.
    static let subcommandNames: Set = ["list", "run", "backfill"]
}

/// The definition named on the command line, with a schedule, from the config's folder.
private func scheduledDefinition(
    _ name: String, _ config: DaemonConfiguration, _ session: Session
) throws
    -> JobDefinition
{
    let set = session.definitions(of: config)
    guard let definition = set.definitions.first(where: { $0.name == name }) else {
        session.noteUnloaded(set, of: config)
        throw JobctlError(
            .unknownDefinition,
            "\(config.definitions) has no definition \(Formatting.oneLine(name)) (jobctl schedules lists the schedules)"
        )
    }
    guard !definition.schedules.isEmpty else {
        throw JobctlError(
            .usage, "definition \(Formatting.oneLine(name)) has no schedule: submit it with jobctl submit \(name)")
    }
    return definition
}

private func scheduleRunStore(_ store: any JobStore) throws -> any JobScheduleRunStore {
    guard let runs = store as? any JobScheduleRunStore else {
        throw JobctlError(.internalError, "this database cannot fire a schedule outside its calendar")
    }
    return runs
}

struct ScheduleRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Fire one occurrence of a definition's schedule now, outside its calendar.",
        discussion: """
            Submits the job the schedule would make (its input), for now: its scheduled_for is the current \
            millisecond and jobs.fired_by is `manual`, so `jobctl status` and `schedules` say it was fired by \
            hand. The calendar is not changed: its next occurrence fires as usual, and while this job runs it \
            counts as the schedule's latest job for `overlap:`. With several schedules, the first one's \
            input is used. Recorded in the audit trail (an `actions` row with verb `run`). Prints the job's id.

            Examples:
              jobctl schedules run nightly-report
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The definition whose schedule to fire.")
    var name: String

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let definition = try scheduledDefinition(name, config, session)
            let schedule = definition.schedules[0]
            let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
            let job = definition.newJob(input: schedule.input, scheduledFor: now)
            let run = try await session.withStore(config) { store in
                try await scheduleRunStore(store).runSchedule(job, by: BulkRun.actor(config))
            }
            session.nudge(config, notRunningNote: "jobd is not running: the job starts when jobd runs")
            if session.json {
                session.console.out(
                    JSON.fields([
                        ("id", .int(run.job)), ("definition", .string(definition.name)),
                        ("scheduled_for", Formatting.timestamp(run.scheduledFor as Date?)),
                        ("fired_by", .string("manual")),
                        ("action", .int(run.action)),
                    ]).pretty)
            } else {
                session.console.out("\(run.job)\n")
            }
        }
    }
}

struct ScheduleBackfillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Fire every occurrence of a schedule in a range that never fired.",
        discussion: """
            Each occurrence of the definition's schedules from --from to --to (both included, at most now) \
            that has no job of the definition becomes one, marked `backfill` (jobs.fired_by), in one \
            transaction; an occurrence that has a job (fired on time, by hand at that instant, or by an \
            earlier backfill) is left alone, since (definition, scheduled_for) is unique: running it twice \
            makes each occurrence once. `overlap:` and `catch-up:` do not apply: every missing occurrence is \
            submitted, and they run as the pool allows. A range of more than 100 occurrences needs --yes; \
            at most 10000 are fired at once. Recorded in the audit trail (an `actions` row with verb \
            `backfill`: the range, how many occurrences, how many jobs made). --dry-run prints the \
            occurrences that would fire and changes nothing.

            Examples:
              jobctl schedules backfill nightly-report --from 2026-11-20T00:00:00Z --to 2026-11-23T00:00:00Z
              jobctl schedules backfill disk-check --from 6h --to now --dry-run
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The definition whose schedule to backfill.")
    var name: String

    @Option(help: ArgumentHelp("The range's start: an RFC 3339 time or a duration ago (6h).", valueName: "time"))
    var from: String

    @Option(
        help: ArgumentHelp("The range's end (included): an RFC 3339 time, a duration ago, or now.", valueName: "time"))
    var to: String

    @Flag(help: "Print the occurrences that would fire; change nothing.")
    var dryRun = false

    @Flag(help: "Fire a range of more than 100 occurrences.")
    var yes = false

    /// More occurrences than this need --yes.
    static let confirmAbove = 100
    /// The most occurrences one backfill fires (one transaction).
    static let maxOccurrences = 10_000

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let definition = try scheduledDefinition(name, config, session)
            let now = Date()
            let start = try JobFilterOptions.time(from, option: "--from", now: now)
            let end = to == "now" ? now : try JobFilterOptions.time(to, option: "--to", now: now)
            guard start <= end else {
                throw JobctlError(
                    .usage, "--from \(RFC3339.string(start)) is after --to \(RFC3339.string(end)): nothing to fire")
            }
            guard end <= now else {
                throw JobctlError(
                    .usage,
                    "--to \(RFC3339.string(end)) is in the future: occurrences after now are the calendar's to fire")
            }
            let zone =
                definition.schedules.contains(where: \.readsHostZone)
                ? ScheduleList.jobdZone(config, session: session) : TimeZone(identifier: "UTC") ?? .current
            // Stored times keep milliseconds: an occurrence is its millisecond.
            var instants = Set<Date>()
            let before = start.addingTimeInterval(-0.001)
            for schedule in definition.schedules {
                let times = schedule.expression.occurrences(
                    after: before, through: end, in: schedule.zone(host: zone), limit: Self.maxOccurrences + 1)
                for time in times {
                    instants.insert(
                        Date(timeIntervalSince1970: (time.timeIntervalSince1970 * 1000).rounded(.down) / 1000))
                }
            }
            let occurrences = instants.sorted()
            guard occurrences.count <= Self.maxOccurrences else {
                throw JobctlError(
                    .usage,
                    "the range holds more than \(Self.maxOccurrences) occurrences: backfill it in parts (a shorter --from/--to)"
                )
            }
            let filter = "--from \(RFC3339.string(start)) --to \(RFC3339.string(end))"
            if dryRun || (occurrences.count > Self.confirmAbove && !yes) {
                let existing = try await session.withStore(config) { store in
                    try await scheduleRunStore(store).scheduledInstants(
                        definition: definition.name, from: start, through: end)
                }
                let missing = occurrences.filter { !existing.contains($0) }
                report(session, occurrences: occurrences.count, made: nil, missing: missing)
                if !dryRun {
                    throw JobctlError(
                        .usage,
                        "\(occurrences.count) occurrences is more than \(Self.confirmAbove): add --yes to fire the \(missing.count) that never fired"
                    )
                }
                return
            }
            let input = definition.schedules[0].input
            let jobs = occurrences.map { definition.newJob(input: input, runAt: nil, scheduledFor: $0) }
            let outcome = try await session.withStore(config) { store in
                try await scheduleRunStore(store).backfill(jobs, filter: filter, by: BulkRun.actor(config))
            }
            if !outcome.made.isEmpty {
                session.nudge(config, notRunningNote: "jobd is not running: the jobs start when jobd runs")
            }
            report(session, occurrences: occurrences.count, made: outcome, missing: nil)
        }
    }

    private func report(_ session: Session, occurrences: Int, made: BackfillOutcome?, missing: [Date]?) {
        if session.json {
            var members: [(String, JSON)] = [("definition", .string(name)), ("occurrences", .int(Int64(occurrences)))]
            if let made {
                members += [
                    ("made", .int(Int64(made.made.count))), ("existed", .int(Int64(made.existing))),
                    ("jobs", .array(made.made.map { .int($0) })), ("action", .int(made.action)),
                ]
            }
            if let missing {
                members += [
                    ("would_make", .int(Int64(missing.count))), ("existed", .int(Int64(occurrences - missing.count))),
                    ("missing", .array(missing.map { Formatting.timestamp($0 as Date?) })),
                ]
            }
            session.console.out(JSON.fields(members).pretty)
        } else if let made {
            session.console.out(
                "\(Session.count(occurrences, "occurrence")): made \(Session.count(made.made.count, "job")), "
                    + "\(made.existing) existed (action \(made.action))\n")
        } else if let missing {
            if dryRun { session.console.out(missing.map { RFC3339.string($0) + "\n" }.joined()) }
            session.console.note(
                "\(Session.count(occurrences, "occurrence")): \(missing.count) would fire, "
                    + "\(occurrences - missing.count) existed")
        }
    }
}
