/// Where jobs and their stage results live: every capability at once, for
/// the callers that use them all (jobd, jobctl, the conformance tests).
///
/// Nothing here names a database: `SQLiteJobStore` (module
/// `JobStoreSQLite`) keeps one host's jobs in a file, `PostgresJobStore`
/// (module `JobStorePostgres`) shares one queue among several hosts. A
/// caller that needs less takes less — the engine's runner a
/// ``JobRunStore``, the dashboard a ``JobReadStore`` — so that a new
/// backend, or a test double, implements what its user needs and the
/// compiler lists what is missing.
///
/// Two styles of call:
/// - What an engine does while jobs run (``JobRunStore``: claim, renew,
///   requeue, stage starts and results, finishing a job, events) takes a
///   completion handler. These are group committed: many are written in one
///   transaction, and each completion is called only after its transaction
///   committed, with `.success` — or with the reason it was not written. No
///   thread waits for them. Completions are called in the order the calls
///   were made, on the store's writer thread right after the commit: keep
///   them short and never block in them (resolve a promise, hop to your own
///   queue). A write made from a completion joins the very next
///   transaction. `async` versions are in an extension.
/// - Everything else (submitting, controlling, reading, schedules,
///   maintenance) is `async`.
///
/// Errors are ``JobStoreError``s.
public protocol JobStore:
    JobRunStore, JobControlStore, JobPauseStore, JobReadStore, JobScheduleStore, JobMaintenanceStore, JobChildStore,
    JobRateStore
{}
