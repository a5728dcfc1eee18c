import Foundation
import JobCalendar
import JobConfig
import JobStore

/// Where a schedule stands: when it fires next, how far it has fired, and
/// its latest job — what `jobctl schedules` and the dashboard show.
public struct ScheduleStatus: Sendable {
    public var definition: String
    public var schedule: ScheduleDefinition
    /// The zone its occurrences are computed in.
    public var zone: TimeZone
    public var next: Date?
    /// The schedule's mark: every occurrence up to it was fired or skipped
    /// (nil: no jobd has run it yet).
    public var firedThrough: Date?
    /// The definition's latest scheduled job (of any of its schedules).
    public var lastJob: Job?

    /// The zone's name as a user reads it (`every` counts in UTC; Foundation
    /// names UTC `GMT`).
    public var zoneName: String {
        schedule.expression.kind == .every || zone.identifier == "GMT" ? "UTC" : zone.identifier
    }

    /// Every schedule of `definitions`, in definition order.
    public static func all(
        of definitions: [JobDefinition], store: any JobScheduleStore, hostZone: TimeZone = HostTimeZone.current.zone,
        now: Date = Date()
    ) async throws -> [ScheduleStatus] {
        let scheduled = definitions.filter { !$0.schedules.isEmpty }
        guard !scheduled.isEmpty else { return [] }
        var marks: [String: Date] = [:]
        // A mark before 1970 is none jobd wrote (a hand-edited row that is
        // not a time): shown as no mark, and the firer replaces it.
        for mark in try await store.scheduleMarks() where mark.firedThrough >= Date(timeIntervalSince1970: 0) {
            marks[mark.definition + "\u{0}" + mark.schedule] = mark.firedThrough
        }
        let latest = try await store.latestScheduledJobs()
        return scheduled.flatMap { definition in
            definition.schedules.map { schedule in
                let zone = schedule.zone(host: hostZone)
                return ScheduleStatus(
                    definition: definition.name, schedule: schedule, zone: zone,
                    next: schedule.expression.next(after: now, in: zone),
                    firedThrough: marks[definition.name + "\u{0}" + schedule.key], lastJob: latest[definition.name])
            }
        }
    }
}
