import ArgumentParser
import Foundation
import JobCalendar
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobValues

/// `jobctl schedules` (and `schedules list`).
struct ScheduleList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the definitions' schedules: expression, zone, next and last fire, latest job.",
        discussion: """
            Each `schedule:` of the definitions jobd loads, with the next time it fires, how far it has fired \
            (every occurrence up to then was fired or skipped, by whichever jobd got there first) and the \
            definition's latest scheduled job. Reads the config and the database; jobd need not run. A \
            schedule without `timezone:` is read in jobd's zone, which a running jobd tells; when none \
            answers, in this host's zone ($TZ, else /etc/localtime), and stderr says so. A definition that \
            does not load is left out, and stderr says so too. `jobctl calendar` shows more fire times of an \
            expression.

            Examples:
              jobctl schedules
              jobctl schedules --json | jq '.schedules[] | {definition, next_fire}'
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let set = session.definitions(of: config)
            let definitions = set.definitions
            let readsHostZone = definitions.contains { $0.schedules.contains(where: \.readsHostZone) }
            let hostZone =
                readsHostZone ? Self.jobdZone(config, session: session) : TimeZone(identifier: "UTC") ?? .current
            let (statuses, triggers) = try await session.withStore(config) { store in
                let statuses = try await ScheduleStatus.all(of: definitions, store: store, hostZone: hostZone)
                let triggers =
                    try await (store as? any JobScheduleRunStore)?.scheduleTriggers(
                        of: statuses.compactMap { $0.lastJob?.id }) ?? [:]
                return (statuses, triggers)
            }
            if session.json {
                session.console.out(
                    JSON.fields([("schedules", .array(statuses.map { Self.json($0, triggers: triggers) }))]).pretty)
            } else if statuses.isEmpty {
                session.console.note("no definition in \(config.definitions) has a schedule")
            } else {
                var table = Table(["DEFINITION", "SCHEDULE", "ZONE", "NEXT", "FIRED THROUGH", "LAST JOB"])
                for status in statuses {
                    let job =
                        status.lastJob.map { job in
                            "\(job.id) \(job.state.rawValue)" + (triggers[job.id].map { " (\($0.rawValue))" } ?? "")
                        } ?? "-"
                    table.add([
                        Table.Cell(Formatting.oneLine(status.definition)),
                        Table.Cell(Formatting.oneLine("\(status.schedule.expression)")),
                        Table.Cell(status.zoneName), Table.Cell(status.next.map(Formatting.timestamp) ?? "never"),
                        Table.Cell(status.firedThrough.map(Formatting.timestamp) ?? "-"), Table.Cell(job),
                    ])
                }
                session.console.out(table.render(session.console))
            }
            session.noteUnloaded(set, of: config)
        }
    }

    /// The zone jobd reads schedules without `timezone:` in, as the running
    /// jobd tells it; else this host's, with a note that says so.
    static func jobdZone(_ config: DaemonConfiguration, session: Session) -> TimeZone {
        let status = (try? ControlClient.status(socketPath: config.socket)) ?? nil
        if let name = status?.timezone, let zone = ScheduleTimeZone.named(name) { return zone }
        let zone = session.hostZone()
        let why = status == nil ? "jobd does not answer on \(config.socket)" : "jobd does not say which zone it runs in"
        session.console.note(
            "\(why): schedules without timezone: are shown in this host's zone, \(zone.identifier) "
                + "(jobd reads them in its own)")
        return zone
    }

    static func json(_ status: ScheduleStatus, triggers: [Int64: ScheduleTrigger]) -> JSON {
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
            (
                "last_job",
                status.lastJob.map { job in
                    .fields([
                        ("id", .int(job.id)), ("state", .string(job.state.rawValue)),
                        ("scheduled_for", Formatting.timestamp(job.scheduledFor)),
                        ("fired_by", triggers[job.id].map { .string($0.rawValue) } ?? .null),
                    ])
                } ?? .null
            ),
        ])
    }
}
