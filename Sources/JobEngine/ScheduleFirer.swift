import Foundation
import JobCalendar
import JobConfig
import JobConfigStore
import JobMetrics
import JobStore
import JobValues
import Locking
import Logging
import Synchronization

/// Fires the schedules of the definitions an engine runs: each occurrence
/// becomes one job (its `scheduled_for` the occurrence's time), exactly once
/// however many jobds share the database — the store moves each schedule's
/// mark with the occurrence in one transaction (`JobStore.fireOccurrence`).
///
/// What is due is computed from the marks in the database and from when
/// this firer first saw each schedule (its start, or the reload that brought
/// the schedule back): the occurrences between the mark and that moment
/// fell while no jobd ran the schedule, and its `catch-up` decides what
/// becomes of them; those after it are on time and fire. A schedule the
/// database has no mark for (new, or edited) starts when first seen: it
/// fires from then on.
///
/// A paused schedule (`jobctl pause schedule`, a `pauses` row) fires
/// nothing and its mark stays; once the pause has ended — resumed, or its
/// `until` passed — the occurrences after the mark up to the pause's end
/// are missed ones, as after downtime, and get the catch-up the resume
/// asked for, else the schedule's.
///
/// A schedule that cannot be fired (the store refuses its job) holds up no
/// other: its failure is logged when it first happens and then at most
/// every ``failureLogInterval``, and it is tried again at each tick.
final class ScheduleFirer: Sendable {
    let store: any JobScheduleStore
    let hostZone: TimeZone
    let metrics: JobMetrics
    let log: @Sendable (Logger.Level, String) -> Void

    /// How long a failure that lasts is not logged again.
    static let failureLogInterval: TimeInterval = 600
    /// Under `catch-up: none`, an occurrence less than this before now is
    /// not skipped yet even if it fell before this firer saw its schedule:
    /// another jobd running the schedule may be firing it on time.
    static let handOver: TimeInterval = 5

    /// What one tick did, and when the next is due.
    struct Tick: Sendable, Equatable {
        var fired: [Int64] = []
        /// The pools of the jobs in `fired`.
        var pools: Set<String> = []
        var skipped = 0
        /// An occurrence held back by `overlap: queue`, or a schedule that
        /// failed: tick again soon.
        var deferred = false
        /// The earliest next occurrence of any schedule (or moment when a
        /// held-back decision is due).
        var next: Date?

        mutating func wake(at date: Date) {
            next = min(next ?? date, date)
        }
    }

    /// What this firer knows of a schedule while its definitions hold it.
    private struct Watch {
        /// When this firer first saw the schedule: occurrences up to then
        /// were missed, those after are on time.
        var since: Date
        /// The missed occurrences have been dealt with as `catch-up` says:
        /// later ticks need not look back again.
        var caughtUp = false
        /// What `catch-up: all` did with the missed occurrences has been
        /// logged (once: under `overlap: queue` they fire over many ticks).
        var backlogLogged = false
        /// A mark ahead of the clock has been logged.
        var aheadLogged = false
        /// The schedule's next occurrence, as last computed.
        var upcoming: Upcoming?
        /// The end of the last pause whose missed occurrences were dealt
        /// with (or found to be none): a pause is caught up once.
        var pauseEnded: Date?
        /// The catch-up the end of a pause asked for, used instead of the
        /// schedule's until its missed occurrences are dealt with.
        var catchUp: ScheduleDefinition.CatchUp?
    }

    /// The first occurrence after `after` (nil: there is none), which is
    /// also the first after any instant before it: a tick need not search
    /// again until it has passed.
    private struct Upcoming {
        var after: Date
        var next: Date?

        func covers(_ instant: Date) -> Bool {
            instant >= after && next.map { instant < $0 } ?? true
        }
    }

    private struct State {
        var watches: [String: Watch] = [:]
        /// What failed, by schedule ("" for reading the marks), and when it was last logged.
        var failures: [String: (message: String, logged: Date)] = [:]
        /// How many times a schedule's missed occurrences were looked for.
        var lookBacks = 0
    }

    /// How many times a schedule's missed occurrences were looked for (tests:
    /// once per schedule after a start or reload, not at every tick).
    var lookBacks: Int { state.withAnnouncedLock { $0.lookBacks } }

    private let state = Mutex(State())

    init(
        store: any JobScheduleStore, hostZone: TimeZone, metrics: JobMetrics,
        log: @escaping @Sendable (Logger.Level, String) -> Void
    ) {
        self.store = store
        self.hostZone = hostZone
        self.metrics = metrics
        self.log = log
    }

    /// Fires what is due at `now` for `definitions`' schedules.
    func tick(at now: Date, definitions: [JobDefinition]) async -> Tick {
        var tick = Tick()
        var marks: [String: Date] = [:]
        var pauses: [String: SchedulePause] = [:]
        do {
            for mark in try await store.scheduleMarks() {
                marks[Self.id(mark.definition, mark.schedule)] = mark.firedThrough
            }
            if let store = store as? any JobSchedulePauseStore {
                for pause in try await store.schedulePauses() { pauses[pause.pause.name] = pause }
            }
            recovered("", "the schedules can be read again", at: now)
        } catch {
            failed("", "could not read the schedules' marks: \(error)", at: now)
            tick.deferred = true
            return tick
        }
        let watches = watch(definitions, at: now)
        for definition in definitions {
            for schedule in definition.schedules {
                let id = Self.id(definition.name, schedule.key)
                let zone = schedule.zone(host: hostZone)
                do {
                    var mark: Date
                    if let known = marks[id] {
                        mark = known
                    } else {
                        mark = try await store.startSchedule(
                            definition: definition.name, schedule: schedule.key, at: now)
                    }
                    var watch = watches[id] ?? Watch(since: now)
                    try await check(&mark, of: schedule, definition: definition, watch: &watch, at: now)
                    if let pause = pauses[definition.name] {
                        if pause.pause.holds(at: now) {
                            // Paused: nothing fires, the mark stays. Look
                            // again at the next occurrence, or when it ends.
                            if let until = pause.pause.until { tick.wake(at: until) }
                            if let next = schedule.expression.next(after: now, in: zone) { tick.wake(at: next) }
                            state.withAnnouncedLock { state in
                                if state.watches[id] != nil { state.watches[id] = watch }
                            }
                            continue
                        }
                        pauseEnded(pause, of: schedule, definition: definition, mark: mark, watch: &watch)
                    }
                    try await fire(
                        schedule, of: definition, watch: &watch, from: &mark, at: now, zone: zone, into: &tick)
                    state.withAnnouncedLock { state in
                        if state.watches[id] != nil { state.watches[id] = watch }
                    }
                    if let next = watch.upcoming?.next { tick.wake(at: next) }
                    recovered(id, "schedule \(schedule.key) of \(definition.name) fires again", at: now)
                } catch {
                    failed(id, "schedule \(schedule.key) of \(definition.name) could not fire: \(error)", at: now)
                    tick.deferred = true
                    if let next = schedule.expression.next(after: now, in: zone) { tick.wake(at: next) }
                }
            }
        }
        return tick
    }

    /// The wall clock stepped forward by `step` (or the machine slept):
    /// the occurrences it went past were not fired on time. As after
    /// downtime, they count as missed, and each schedule's `catch-up`
    /// decides what becomes of them.
    func clockStepped(by step: TimeInterval, at now: Date) {
        let watched = state.withAnnouncedLock { state -> Int in
            for id in state.watches.keys { state.watches[id] = Watch(since: now) }
            return state.watches.count
        }
        guard watched > 0 else { return }
        log(
            .warning,
            "the clock moved forward by \(WallClockSteps.text(step)) (a clock step or a suspend): the schedules' occurrences it went past count as missed, and each schedule's catch-up decides"
        )
    }

    /// A pause of the schedule has ended (at its `until`): the occurrences
    /// after the mark up to then were held back, so they count as missed —
    /// once per pause — and get the catch-up the resume gave, else the
    /// schedule's.
    private func pauseEnded(
        _ pause: SchedulePause, of schedule: ScheduleDefinition, definition: JobDefinition, mark: Date,
        watch: inout Watch
    ) {
        guard let end = pause.pause.until.map(Self.millisecond), end > mark, watch.pauseEnded != end else { return }
        watch.pauseEnded = end
        watch.since = max(watch.since, end)
        watch.caughtUp = false
        watch.backlogLogged = false
        watch.catchUp = pause.catchUp.flatMap(ScheduleDefinition.CatchUp.init(rawValue:))
        let policy = watch.catchUp ?? schedule.catchUp
        log(
            .notice,
            "schedule \(schedule.key) of \(definition.name): its pause ended at \(Self.text(end)); the occurrences it held back get catch-up: \(policy.rawValue)"
        )
    }

    /// Starts watching the schedules seen for the first time (or again,
    /// after a reload had removed them); forgets those no longer there.
    private func watch(_ definitions: [JobDefinition], at now: Date) -> [String: Watch] {
        let present = Set(
            definitions.flatMap { definition in definition.schedules.map { Self.id(definition.name, $0.key) } })
        return state.withAnnouncedLock { state in
            state.watches = state.watches.filter { present.contains($0.key) }
            state.failures = state.failures.filter { $0.key.isEmpty || present.contains($0.key) }
            for id in present where state.watches[id] == nil { state.watches[id] = Watch(since: now) }
            return state.watches
        }
    }

    /// A mark jobd cannot have written — not a time (a hand-edited row reads
    /// as before 1970) — is replaced by `now`: the schedule starts anew, as
    /// one without a mark does. A mark ahead of the clock is kept (after a
    /// step back, the occurrences up to it were fired) but said once, as
    /// the schedule fires nothing until the clock reaches it.
    private func check(
        _ mark: inout Date, of schedule: ScheduleDefinition, definition: JobDefinition, watch: inout Watch, at now: Date
    ) async throws {
        let what = "schedule \(schedule.key) of \(definition.name)"
        if mark < Date(timeIntervalSince1970: 0) {
            let restart = Self.millisecond(now)
            if try await store.skipOccurrences(definition: definition.name, schedule: schedule.key, through: restart) {
                log(
                    .warning,
                    "\(what): its mark in schedule_marks (fired_through) is not a time jobd wrote; replaced by now, \(Self.text(restart)): the schedule starts anew, and what it missed is not caught up"
                )
            }
            mark = restart
            watch = Watch(since: now)
        } else if mark > now + Self.markAheadTolerance, !watch.aheadLogged {
            watch.aheadLogged = true
            log(
                .warning,
                "\(what): fired through \(Self.text(mark)), after now (\(Self.text(now))): it fires nothing until then. The clock went back, or the mark was written by a host whose clock ran ahead or by hand; to start the schedule anew from now, delete its row from schedule_marks (definition \(definition.name), schedule \(schedule.key))"
            )
        }
    }

    /// How far a mark may be ahead of the clock before it is worth a warning.
    static let markAheadTolerance: TimeInterval = 60

    /// Fires the due occurrences of one schedule; notes in `watch` whether
    /// the occurrences missed before `watch.since` have been dealt with, and
    /// the schedule's next occurrence after `now`.
    private func fire(
        _ schedule: ScheduleDefinition, of definition: JobDefinition, watch: inout Watch, from mark: inout Date,
        at now: Date, zone: TimeZone, into tick: inout Tick
    ) async throws {
        let expression = schedule.expression
        let what = "schedule \(schedule.key) of \(definition.name)"
        let missedThrough = min(now, watch.since)
        var due: [Date] = []
        var caughtUp = true
        /// Under `catch-up: all`, what was missed, for the summary logged once the missed occurrences are fired.
        var backlog: String?
        if !watch.caughtUp, mark < missedThrough {
            state.withAnnouncedLock { $0.lookBacks += 1 }
            switch watch.catchUp ?? schedule.catchUp {
            case .none:
                let decided = min(missedThrough, now - Self.handOver)
                if decided < missedThrough {
                    caughtUp = false
                    tick.wake(at: missedThrough + Self.handOver)
                }
                if let last = expression.previous(atOrBefore: decided, in: zone).map(Self.millisecond), last > mark,
                    try await store.skipOccurrences(definition: definition.name, schedule: schedule.key, through: last)
                {
                    log(
                        .notice,
                        "\(what): occurrences up to \(Self.text(last)) fell while no jobd ran this schedule; skipped (catch-up: none)"
                    )
                    mark = last
                }
            case .latest:
                if let last = expression.previous(atOrBefore: missedThrough, in: zone).map(Self.millisecond),
                    last > mark
                {
                    due.append(last)
                    let before = Date(timeIntervalSince1970: last.timeIntervalSince1970 - 0.000_001)
                    if let earlier = expression.previous(atOrBefore: before, in: zone).map(Self.millisecond),
                        earlier > mark
                    {
                        log(
                            .notice,
                            "\(what): the occurrences after \(Self.text(mark)) up to \(Self.text(earlier)) fell while no jobd ran this schedule; skipped: only the latest, \(Self.text(last)), fires (catch-up: latest)"
                        )
                    }
                }
            case .all:
                let missed = expression.latestOccurrences(
                    after: mark, through: missedThrough, in: zone, limit: ScheduleDefinition.maxCatchUp + 1)
                due += missed.suffix(ScheduleDefinition.maxCatchUp).map(Self.millisecond)
                backlog =
                    missed.count > ScheduleDefinition.maxCatchUp
                    ? "more than \(ScheduleDefinition.maxCatchUp) occurrences fell while no jobd ran this schedule; catch-up: all fires the latest \(ScheduleDefinition.maxCatchUp)"
                    : "\(missed.count) occurrence\(missed.count == 1 ? "" : "s") fell while no jobd ran this schedule; catch-up: all fires each"
            }
        }
        let missedDue = due.count
        let onTimeAfter = max(due.last ?? mark, mark, missedThrough)
        if watch.upcoming?.covers(onTimeAfter) != true {
            watch.upcoming = Upcoming(after: onTimeAfter, next: expression.next(after: onTimeAfter, in: zone))
        }
        if let first = watch.upcoming?.next, first <= now {
            due += expression.occurrences(
                after: onTimeAfter, through: now, in: zone, limit: ScheduleDefinition.maxCatchUp
            )
            .map(Self.millisecond).filter { $0 > mark }
        }
        let before = (fired: tick.fired.count, skipped: tick.skipped)
        var complete = try await fire(
            Array(due.prefix(missedDue)), of: schedule, definition: definition, from: &mark, into: &tick)
        if let backlog, !watch.backlogLogged, missedDue > 0 {
            watch.backlogLogged = true
            let made = tick.fired.count - before.fired
            let skipped = tick.skipped - before.skipped
            var outcome = "\(made) made a job"
            if skipped > 0 {
                outcome +=
                    schedule.overlap == .skip
                    ? ", \(skipped) \(skipped == 1 ? "was" : "were") skipped because an earlier job of \(definition.name) had not ended (overlap: skip; with overlap: queue or allow each of them runs)"
                    : ", \(skipped) \(skipped == 1 ? "was" : "were") skipped (the notices above say why)"
            }
            if !complete {
                outcome +=
                    ", \(missedDue - made - skipped) wait to fire one at a time, each once the previous job has ended (overlap: queue)"
            }
            log(backlog.hasPrefix("more") ? .warning : .notice, "\(what): \(backlog): \(outcome)")
        }
        if complete {
            complete = try await fire(
                Array(due.dropFirst(missedDue)), of: schedule, definition: definition, from: &mark, into: &tick)
        }
        if complete {
            watch.caughtUp = watch.caughtUp || caughtUp
            if watch.caughtUp {
                watch.catchUp = nil
                // What the pause held back is dealt with: the mark moves to
                // its end, so that its row, kept, is never caught up again
                // (by this jobd after a restart, or by another).
                if let end = watch.pauseEnded, mark < end, end <= now {
                    _ = try await store.skipOccurrences(
                        definition: definition.name, schedule: schedule.key, through: end)
                    mark = end
                }
            }
        }
        if watch.upcoming?.covers(now) != true {
            watch.upcoming = Upcoming(after: now, next: expression.next(after: now, in: zone))
        }
    }

    /// Fires each of `due`, in order; false when one is held back (`overlap: queue`).
    private func fire(
        _ due: [Date], of schedule: ScheduleDefinition, definition: JobDefinition, from mark: inout Date,
        into tick: inout Tick
    ) async throws -> Bool {
        let what = "schedule \(schedule.key) of \(definition.name)"
        for occurrence in due {
            let runAt =
                occurrence + schedule.jitterOffset(definition: definition.name, occurrence: occurrence).timeInterval
            let job = definition.newJob(input: schedule.input, runAt: runAt, scheduledFor: occurrence)
            let outcome = try await store.fireOccurrence(
                ScheduleOccurrence(
                    definition: definition.name, schedule: schedule.key, at: occurrence, job: job,
                    overlap: ScheduleOccurrence.Overlap(schedule.overlap)))
            switch outcome {
            case let .fired(id):
                tick.fired.append(id)
                tick.pools.insert(job.pool)
                metrics.scheduleOccurrence(definition: definition.name, outcome: .fired)
                log(.info, "\(what): occurrence \(Self.text(occurrence)) is job \(id)")
            case let .skipped(running):
                tick.skipped += 1
                metrics.scheduleOccurrence(definition: definition.name, outcome: .skipped)
                log(
                    .notice,
                    "\(what): occurrence \(Self.text(occurrence)) skipped, job \(running) has not ended (overlap: skip)"
                )
            case let .coincided(job):
                tick.skipped += 1
                metrics.scheduleOccurrence(definition: definition.name, outcome: .skipped)
                log(
                    .notice,
                    "\(what): occurrence \(Self.text(occurrence)) made no job: job \(job), of another schedule of \(definition.name), is for the same instant"
                )
            case let .duplicate(job):
                tick.skipped += 1
                metrics.scheduleOccurrence(definition: definition.name, outcome: .skipped)
                log(
                    .notice,
                    "\(what): occurrence \(Self.text(occurrence)) made no job: job \(job) holds its unique key")
            case .deferred:
                tick.deferred = true
                return false
            case .alreadyDone:
                break
            }
            mark = max(mark, occurrence)
        }
        return true
    }

    // MARK: Failures

    /// Logs a failure of `id` when it is new or its message changed, else at
    /// most every ``failureLogInterval``.
    private func failed(_ id: String, _ message: String, at now: Date) {
        let logNow = state.withAnnouncedLock { state -> Bool in
            if let last = state.failures[id], last.message == message,
                now.timeIntervalSince(last.logged) < Self.failureLogInterval
            {
                return false
            }
            state.failures[id] = (message, now)
            return true
        }
        if logNow {
            log(
                .error,
                "\(message); trying again (while it lasts, this is logged every \(Int(Self.failureLogInterval / 60)) min)"
            )
        }
    }

    private func recovered(_ id: String, _ message: String, at now: Date) {
        let wasFailing = state.withAnnouncedLock { $0.failures.removeValue(forKey: id) != nil }
        if wasFailing { log(.notice, message) }
    }

    // MARK: Names and times

    private static func id(_ definition: String, _ schedule: String) -> String {
        definition + "\u{0}" + schedule
    }

    /// Stored times keep milliseconds: an occurrence is named by its millisecond.
    static func millisecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// An occurrence as the log names it, with its fraction of a second if any.
    static func text(_ date: Date) -> String {
        RFC3339.string(date)
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
