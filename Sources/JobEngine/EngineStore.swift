import JobStore

/// What an engine uses of a store: running jobs (``JobRunStore``), the few
/// reads it makes (a job's state after a lost write, the pending count for
/// its status) and firing schedules. A test double implements these three.
public typealias EngineStore = JobReadStore & JobRunStore & JobScheduleStore & JobChildStore
