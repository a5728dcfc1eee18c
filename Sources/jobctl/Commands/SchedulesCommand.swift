import ArgumentParser
import Foundation
import JobCalendar
import JobConfig
import JobControl
import JobStore
import JobValues

struct Schedules: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "List the definitions' schedules: expression, zone, next and last fire, latest job.",
        discussion: """
            Each `schedule:` of the definitions jobd loads, with the next time it fires, how far it has fired \
            (every occurrence up to then was fired or skipped, by whichever jobd got there first) and the \
            definition's latest scheduled job. Reads the config and the database; jobd need not run. \
            `jobctl calendar` shows more fire times of an expression.

            Examples:
              jobctl schedules
              jobctl schedules --json | jq '.schedules[] | {definition, next_fire}'
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let definitions = session.definitions(of: config).definitions
            let statuses = try await session.withStore(config) { store in
                try await ScheduleStatus.all(of: definitions, store: store)
            }
            if session.json {
                session.console.out(JSON.fields([("schedules", .array(statuses.map(Self.json)))]).pretty)
            } else if statuses.isEmpty {
                session.console.note("no definition in \(config.definitions) has a schedule")
            } else {
                var table = Table(["DEFINITION", "SCHEDULE", "ZONE", "NEXT", "FIRED THROUGH", "LAST JOB"])
                for status in statuses {
                    let job = status.lastJob.map { "\($0.id) \($0.state.rawValue)" } ?? "-"
                    table.add([
                        Table.Cell(status.definition), Table.Cell(Formatting.oneLine("\(status.schedule.expression)")),
                        Table.Cell(status.zoneName), Table.Cell(status.next.map(Formatting.timestamp) ?? "never"),
                        Table.Cell(status.firedThrough.map(Formatting.timestamp) ?? "-"), Table.Cell(job),
                    ])
                }
                session.console.out(table.render(session.console))
            }
        }
    }

    static func json(_ status: ScheduleStatus) -> JSON {
        let schedule = status.schedule
        return .fields([
            ("definition", .string(status.definition)),
            ("kind", .string(schedule.expression.kind.rawValue)),
            ("expression", .string(schedule.expression.text)),
            ("timezone", .string(status.zoneName)),
            ("catch_up", .string(schedule.catchUp.rawValue)),
            ("overlap", .string(schedule.overlap.rawValue)),
            ("jitter", .optional(schedule.jitter?.jobdText)),
            ("next_fire", Formatting.timestamp(status.next)),
            ("fired_through", Formatting.timestamp(status.firedThrough)),
            ("last_job", status.lastJob.map { job in
                .fields([("id", .int(job.id)), ("state", .string(job.state.rawValue)),
                         ("scheduled_for", Formatting.timestamp(job.scheduledFor))])
            } ?? .null),
        ])
    }
}
