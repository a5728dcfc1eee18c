import Foundation
import JobCalendar
import JobConfig
import JobMetrics
import JobStore
import Logging

/// Fires the schedules of the definitions an engine runs: each occurrence
/// becomes one job (its `scheduled_for` the occurrence's time), exactly once
/// however many jobds share the database — the store moves each schedule's
/// mark with the occurrence in one transaction (`JobStore.fireOccurrence`).
///
/// What is due is computed from the marks in the database, never from
/// memory: after a restart, the occurrences between a schedule's mark and
/// the moment this firer first ran fell while no jobd ran, and the
/// schedule's `catch-up` decides what becomes of them; those after it are on
/// time and fire. A schedule the database has no mark for (new, or edited)
/// starts at that first run: it fires from then on.
struct ScheduleFirer: Sendable {
    let store: any JobStore
    let hostZone: TimeZone
    let metrics: JobMetrics
    let log: @Sendable (Logger.Level, String) -> Void
    /// When this firer first ran: occurrences up to it were missed.
    let startedAt: Date

    /// What one tick did, and when the next is due.
    struct Tick: Sendable, Equatable {
        var fired: [Int64] = []
        var skipped = 0
        /// An occurrence held back by `overlap: queue`: tick again soon.
        var deferred = false
        /// The earliest next occurrence of any schedule.
        var next: Date?
    }

    /// Fires what is due at `now` for `definitions`' schedules.
    func tick(at now: Date, definitions: [JobDefinition]) async throws -> Tick {
        var tick = Tick()
        var marks: [String: Date] = [:]
        for mark in try await store.scheduleMarks() { marks[mark.definition + "\u{0}" + mark.schedule] = mark.firedThrough }
        for definition in definitions {
            for schedule in definition.schedules {
                let zone = schedule.zone(host: hostZone)
                var mark: Date
                if let known = marks[definition.name + "\u{0}" + schedule.key] {
                    mark = known
                } else {
                    mark = try await store.startSchedule(definition: definition.name, schedule: schedule.key, at: now)
                }
                try await fire(schedule, of: definition, from: &mark, at: now, zone: zone, into: &tick)
                if let next = schedule.expression.next(after: now, in: zone) {
                    tick.next = min(tick.next ?? next, next)
                }
            }
        }
        return tick
    }

    private func fire(
        _ schedule: ScheduleDefinition, of definition: JobDefinition, from mark: inout Date, at now: Date, zone: TimeZone,
        into tick: inout Tick
    ) async throws {
        let expression = schedule.expression
        let missedThrough = min(now, startedAt)
        var due: [Date] = []
        if mark < missedThrough {
            switch schedule.catchUp {
            case .none:
                if let last = expression.previous(atOrBefore: missedThrough, in: zone).map(Self.millisecond), last > mark,
                   try await store.skipOccurrences(definition: definition.name, schedule: schedule.key, through: last) {
                    log(.notice, "schedule \(schedule.key) of \(definition.name): occurrences up to \(Self.text(last)) fell while no jobd ran; skipped (catch-up: none)")
                    mark = last
                }
            case .latest:
                if let last = expression.previous(atOrBefore: missedThrough, in: zone).map(Self.millisecond), last > mark {
                    due.append(last)
                }
            case .all:
                let missed = expression.latestOccurrences(
                    after: mark, through: missedThrough, in: zone, limit: ScheduleDefinition.maxCatchUp + 1)
                if missed.count > ScheduleDefinition.maxCatchUp {
                    log(.warning, "schedule \(schedule.key) of \(definition.name): more than \(ScheduleDefinition.maxCatchUp) occurrences fell while no jobd ran; the latest \(ScheduleDefinition.maxCatchUp) run (catch-up: all)")
                }
                due += missed.suffix(ScheduleDefinition.maxCatchUp).map(Self.millisecond)
            }
        }
        let onTimeAfter = max(due.last ?? mark, mark, missedThrough)
        due += expression.occurrences(after: onTimeAfter, through: now, in: zone, limit: ScheduleDefinition.maxCatchUp)
            .map(Self.millisecond).filter { $0 > mark }
        for occurrence in due {
            let runAt = occurrence + schedule.jitterOffset(definition: definition.name, occurrence: occurrence).timeInterval
            let job = definition.newJob(input: schedule.input, runAt: runAt, scheduledFor: occurrence)
            let outcome = try await store.fireOccurrence(ScheduleOccurrence(
                definition: definition.name, schedule: schedule.key, at: occurrence, job: job,
                overlap: ScheduleOccurrence.Overlap(schedule.overlap)))
            switch outcome {
            case let .fired(id):
                tick.fired.append(id)
                metrics.scheduleOccurrence(definition: definition.name, outcome: .fired)
                log(.info, "schedule \(schedule.key) of \(definition.name): occurrence \(Self.text(occurrence)) is job \(id)")
            case let .skipped(running):
                tick.skipped += 1
                metrics.scheduleOccurrence(definition: definition.name, outcome: .skipped)
                log(.notice, "schedule \(schedule.key) of \(definition.name): occurrence \(Self.text(occurrence)) skipped, job \(running) has not ended (overlap: skip)")
            case .deferred:
                tick.deferred = true
                return
            case .alreadyDone:
                break
            }
            mark = max(mark, occurrence)
        }
    }

    /// Stored times keep milliseconds: an occurrence is named by its millisecond.
    static func millisecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    static func text(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

extension ScheduleOccurrence.Overlap {
    init(_ overlap: ScheduleDefinition.Overlap) {
        switch overlap {
        case .skip: self = .skip
        case .queue: self = .queue
        case .allow: self = .allow
        }
    }
}
