import Foundation

/// A schedule's pause as the firer reads it: a row of `pauses` with scope
/// `schedule` (named by the definition), also once it has ended, so that
/// the occurrences that fell while it held get a catch-up.
public struct SchedulePause: Sendable, Hashable {
    public var pause: Pause
    /// The catch-up the resume asked for (`none`, `latest`, `all`); `nil`:
    /// the schedule's own.
    public var catchUp: String?

    public init(pause: Pause, catchUp: String? = nil) {
        self.pause = pause
        self.catchUp = catchUp
    }
}

/// Pausing a definition's schedules: while the pause holds, no jobd fires
/// them and their marks stay where they were; once it ends — resumed, or
/// its `until` passed — the occurrences that fell meanwhile get the
/// schedule's catch-up policy, or the one the resume gave.
public protocol JobSchedulePauseStore: Sendable {
    /// Every schedule pause, those that ended included (their `until` is
    /// when they ended).
    func schedulePauses() async throws -> [SchedulePause]

    /// Ends the pause of `definition`'s schedules now (its `until` becomes
    /// the database's now, `catch_up` the policy given) and tells the jobds.
    /// Gives the pause as it held, or `nil` when none held.
    func resumeSchedule(_ definition: String, catchUp: String?) async throws -> Pause?
}
