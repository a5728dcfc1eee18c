import Foundation

/// How a scheduled job that jobd's calendar did not fire on time came to
/// be: `jobs.fired_by` (NULL for the jobs the schedule fired itself).
public enum ScheduleTrigger: String, Sendable, Hashable, CaseIterable {
    /// `jobctl schedules run`, or the dashboard's "run now": one occurrence
    /// now, outside the calendar.
    case manual
    /// `jobctl schedules backfill`: an occurrence of the calendar that
    /// never fired, fired afterwards.
    case backfill
}

/// How a job fired outside the calendar came to be: its trigger, and the
/// action that fired it when the audit trail has it.
public struct ScheduleFiring: Sendable, Hashable {
    public var trigger: ScheduleTrigger
    /// The `run` or `backfill` action's id.
    public var action: Int64?
    /// Who fired it (the action's actor).
    public var actor: ActionActor?

    public init(trigger: ScheduleTrigger, action: Int64? = nil, actor: ActionActor? = nil) {
        self.trigger = trigger
        self.action = action
        self.actor = actor
    }
}

/// What an operator does to a schedule or a pause, as the audit trail
/// (`actions.verb`) names it; the job actions are ``ActionVerb``.
public enum OperatorVerb: String, Sendable, Hashable, CaseIterable {
    /// A schedule's occurrence fired by hand.
    case run
    /// A schedule's missed occurrences fired over a range.
    case backfill
    /// A pool, a definition or a schedule paused.
    case pause
    /// A pause removed.
    case resume
}

/// One occurrence fired by hand: the job, and the audit trail's action.
public struct ScheduleRun: Sendable, Hashable {
    public var job: Int64
    /// The instant the job is for (`scheduled_for`): the time asked for,
    /// or a millisecond after when a job of the definition already had it.
    public var scheduledFor: Date
    public var action: Int64

    public init(job: Int64, scheduledFor: Date, action: Int64) {
        self.job = job
        self.scheduledFor = scheduledFor
        self.action = action
    }
}

/// What a backfill did.
public struct BackfillOutcome: Sendable, Hashable {
    /// The jobs it made, in occurrence order.
    public var made: [Int64]
    /// The occurrences that had a job already (fired on time, or by an earlier backfill).
    public var existing: Int
    public var action: Int64

    public init(made: [Int64], existing: Int, action: Int64) {
        self.made = made
        self.existing = existing
        self.action = action
    }
}

/// Firing a schedule's occurrences outside its calendar, and recording what
/// operators do to schedules and pauses in the audit trail (`actions`).
///
/// Every job made here carries its `scheduled_for`, so (definition,
/// scheduled_for), unique in the database, keeps each instant to one job:
/// a backfill run twice makes each occurrence once, and never one the
/// calendar fired. The schedules' marks are not moved: what the calendar
/// fires on time is not changed by what is fired by hand.
public protocol JobScheduleRunStore: Sendable {
    /// Submits `job` (its `scheduledFor` set: the instant it is for) marked
    /// ``ScheduleTrigger/manual``, with a `run` action and the job's event
    /// naming it, in one transaction. When a job of the definition already
    /// has that instant, the next free millisecond is taken.
    func runSchedule(_ job: NewJob, by actor: ActionActor) async throws -> ScheduleRun

    /// Submits each of `jobs` (one definition's, each with its
    /// `scheduledFor`) whose instant has no job of the definition yet,
    /// marked ``ScheduleTrigger/backfill``, with one `backfill` action
    /// (`filter` says the range) and an event on each job made, in one
    /// transaction.
    func backfill(_ jobs: [NewJob], filter: String, by actor: ActionActor) async throws -> BackfillOutcome

    /// The instants in `from...through` that already have a job of `definition`.
    func scheduledInstants(definition: String, from: Date, through: Date) async throws -> Set<Date>

    /// How each of `ids` that was fired outside the calendar came to be; the
    /// others are left out.
    func scheduleTriggers(of ids: [Int64]) async throws -> [Int64: ScheduleTrigger]

    /// How job `id` was fired outside the calendar, with the action that
    /// fired it (the one its `action` event names); nil for a job the
    /// calendar fired, a job not scheduled, or no such job.
    func scheduleFiring(of id: Int64) async throws -> ScheduleFiring?

    /// Records an operator's action that changes no job (a pause, a
    /// resume): who, `verb`, and what it named (`filter`, e.g. `schedule
    /// nightly`, and the definition when there is one). Gives the action's id.
    func recordOperatorAction(
        _ verb: OperatorVerb, filter: String, definition: String?, by actor: ActionActor
    ) async throws -> Int64
}

extension ScheduleTrigger {
    /// The event a job made outside the calendar gets: who and which action.
    package func eventMessage(actor: ActionActor, action: Int64, filter: String) -> String {
        switch self {
        case .manual: "fired by hand (schedules run) by \(actor.description) (action \(action))"
        case .backfill: "fired by a backfill (\(filter)) by \(actor.description) (action \(action))"
        }
    }

    /// The `actions.verb` of the action that makes such jobs.
    package var verb: OperatorVerb {
        switch self {
        case .manual: .run
        case .backfill: .backfill
        }
    }
}
