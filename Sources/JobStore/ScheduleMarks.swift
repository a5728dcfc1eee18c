import Foundation

/// How far a schedule has fired: every occurrence at or before `firedThrough`
/// was fired or skipped, by whichever process on the database got there
/// first. Kept per (definition, schedule), so that what is due after a
/// restart is computed from the database, not from memory.
public struct ScheduleMark: Sendable, Hashable {
    public var definition: String
    /// The schedule's key (its expression and zone): an edited expression is a new schedule.
    public var schedule: String
    public var firedThrough: Date

    public init(definition: String, schedule: String, firedThrough: Date) {
        self.definition = definition
        self.schedule = schedule
        self.firedThrough = firedThrough
    }
}

/// One occurrence of a schedule, to fire.
public struct ScheduleOccurrence: Sendable, Hashable {
    /// What to do while an earlier scheduled job of the definition has not ended.
    public enum Overlap: String, Sendable, Hashable {
        /// Skip this occurrence, with an event on the job still running.
        case skip
        /// Leave it for later: nothing is written, the mark stays.
        case queue
        /// Fire it anyway.
        case allow
    }

    public var definition: String
    public var schedule: String
    /// The occurrence's time: the job's `scheduled_for`.
    public var at: Date
    /// The job to submit; its `scheduledFor` is `at`.
    public var job: NewJob
    public var overlap: Overlap

    public init(definition: String, schedule: String, at: Date, job: NewJob, overlap: Overlap) {
        self.definition = definition
        self.schedule = schedule
        self.at = at
        self.job = job
        self.overlap = overlap
    }
}

/// What ``JobScheduleStore/fireOccurrence(_:)`` did.
public enum OccurrenceOutcome: Sendable, Hashable {
    /// This call submitted job `id` for the occurrence.
    case fired(Int64)
    /// Skipped (overlap `skip`): scheduled job `running` had not ended.
    case skipped(running: Int64)
    /// Held back (overlap `queue`): an earlier scheduled job has not ended.
    case deferred
    /// Another schedule of the definition already fired job `job` for the
    /// same instant ((definition, scheduled_for) is unique): this one made
    /// no job, its mark moved, and a `schedule-skipped` event on `job` says so.
    case coincided(job: Int64)
    /// Job `job` holds the occurrence's unique key (the definition's
    /// `unique:`): this one made no job, its mark moved, and a
    /// `schedule-skipped` event on `job` says so.
    case duplicate(job: Int64)
    /// The schedule's mark was already at or past the occurrence: another
    /// process (or an earlier call) fired or skipped it.
    case alreadyDone
}

extension ScheduleOccurrence {
    /// The event recorded on the running job when this occurrence is skipped.
    package func skippedMessage() -> String {
        "schedule \(schedule) of \(definition): the occurrence at \(Timestamp.text(at)) was skipped "
            + "because this job had not ended (overlap: skip)"
    }

    /// The event recorded on job `job`, of another schedule of the
    /// definition, when this occurrence falls on the same instant.
    package func coincidedMessage(job: Int64) -> String {
        "schedule \(schedule) of \(definition): the occurrence at \(Timestamp.text(at)) made no job of its own: "
            + "this job, of another schedule of the definition, is for the same instant"
    }

    /// The event recorded on job `job` when it holds the unique key this
    /// occurrence's job would have had.
    package func duplicateMessage(job: Int64) -> String {
        "schedule \(schedule) of \(definition): the occurrence at \(Timestamp.text(at)) made no job: "
            + "this job holds its unique key"
    }
}
