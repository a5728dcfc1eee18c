import ArgumentParser
import Foundation
import JobCalendar
import JobConfig

/// `jobctl calendar`: the next fire times of a schedule expression, to
/// check one before deploying it (as `systemd-analyze calendar` does).
struct CalendarCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calendar",
        abstract: "Print the next fire times of a cron, calendar or every expression.",
        discussion: """
            The next --count times (default 5, at most 1000) strictly after --from (default now), one RFC \
            3339 UTC time a line, as jobd would fire them. --timezone is the schedule's zone (default: this \
            host's, from $TZ or /etc/localtime); a calendar expression that names its own zone uses that one; \
            every: ignores zones. Fewer lines (and a note on stderr) when the expression stops firing. A bad \
            expression gets one line on stderr naming the field and column, and exit status 64. No config or \
            database is read.

            Examples:
              jobctl calendar --cron '*/15 9-17 * * mon-fri' --timezone Europe/Berlin
              jobctl calendar --calendar 'Mon..Fri *-*-* 09:00' --count 10
              jobctl calendar --every 15m --from 2026-11-24T09:00:00Z --json
            """)

    static let maximumCount = 1000

    @OptionGroup var options: GlobalOptions

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("A five-field cron expression, or @hourly … @yearly.", valueName: "expression"))
    var cron: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("A systemd calendar event (systemd.time(7)).", valueName: "expression"))
    var calendar: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "An interval of at least 1s (15m, 1h30m, 1d): its multiples since 1970.",
            valueName: "duration"))
    var every: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The schedule's time zone (default: this host's).", valueName: "zone"))
    var timezone: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Times strictly after this RFC 3339 time (default: now).", valueName: "time"))
    var from: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("How many times to print (1–\(maximumCount)).", valueName: "n"))
    var count: Int = 5

    func validate() throws {
        let given = [cron, calendar, every].compactMap { $0 }.count
        guard given == 1 else {
            throw ValidationError(
                given == 0
                    ? "give one of --cron, --calendar and --every"
                    : "give one of --cron, --calendar and --every, not \(given)")
        }
        guard (1...Self.maximumCount).contains(count) else {
            throw ValidationError("--count must be within 1…\(Self.maximumCount), not \(count)")
        }
    }

    func run() async throws {
        try await options.run { session in
            let expression = try parsedExpression()
            let zone = try timezone.map(Self.zone(named:)) ?? session.hostZone()
            var cursor = try from.map(Self.instant) ?? Date()
            var times: [Date] = []
            while times.count < count, let next = expression.next(after: cursor, in: zone) {
                times.append(next)
                cursor = next
            }
            let lines = times.map(RFC3339.string)
            if session.json {
                session.console.out(JSON.fields([("times", .array(lines.map(JSON.string)))]).pretty)
            } else {
                session.console.out(lines.map { $0 + "\n" }.joined())
            }
            if times.count < count {
                session.console.note(
                    times.isEmpty
                        ? "\(expression.text) never fires after \(RFC3339.string(cursor))"
                        : "\(expression.text) fires no more after \(RFC3339.string(cursor))")
            }
        }
    }

    func parsedExpression() throws -> ScheduleExpression {
        let (kind, text): (ScheduleKind, String) =
            if let cron { (.cron, cron) } else if let calendar { (.calendar, calendar) } else { (.every, every ?? "") }
        do {
            return try ScheduleExpression.parse(kind: kind, text: text)
        } catch {
            throw JobctlError(.usage, error.description)
        }
    }

    static func zone(named name: String) throws -> TimeZone {
        switch ScheduleTimeZone.lookup(name) {
        case let .success(zone):
            return zone
        case let .failure(error):
            throw JobctlError(
                .usage, "unknown time zone \"\(name)\": \(error.reason) (write e.g. Europe/Berlin or UTC)")
        }
    }

    /// RFC 3339: `2026-11-24T09:00:00Z`, `2026-11-24T10:00:00.5+01:00`.
    static func instant(_ text: String) throws -> Date {
        do {
            return try RFC3339.date(text)
        } catch {
            throw JobctlError(
                .usage,
                "invalid --from \"\(text)\": \(error.reason); write an RFC 3339 time, "
                    + "e.g. 2026-11-24T09:00:00Z or 2026-11-24T10:00:00+01:00")
        }
    }
}
