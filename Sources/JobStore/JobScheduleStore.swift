import Foundation

/// What schedules need: each schedule's mark (how far it has fired), and
/// firing or passing over occurrences so that, among every process using
/// the database, exactly one does each.
public protocol JobScheduleStore: Sendable {
    /// Every schedule's mark.
    func scheduleMarks() async throws -> [ScheduleMark]

    /// Starts the mark of a schedule that has none at `at` (occurrences up to
    /// then are never fired: a new schedule fires from now on). Gives the
    /// mark in force, this one or one another process started first.
    func startSchedule(definition: String, schedule: String, at: Date) async throws -> Date

    /// Fires `occurrence` — or skips or holds it, as its overlap says — in
    /// one transaction that also moves the schedule's mark to it: however
    /// many processes call this for one occurrence, exactly one fires or
    /// skips it, and the others get ``OccurrenceOutcome/alreadyDone``. An
    /// occurrence whose (definition, scheduled_for) another schedule of the
    /// definition already fired makes no job: ``OccurrenceOutcome/coincided(job:)``.
    func fireOccurrence(_ occurrence: ScheduleOccurrence) async throws -> OccurrenceOutcome

    /// Moves a schedule's mark to `through` without firing (occurrences a
    /// `catch-up` policy passes over). False when the mark was already
    /// there: another process passed over them first.
    func skipOccurrences(definition: String, schedule: String, through: Date) async throws -> Bool

    /// The newest scheduled job (latest `scheduled_for`) of each definition that has one.
    func latestScheduledJobs() async throws -> [String: Job]
}
