/// When a host that cannot renew a job's lease stops the job's processes
/// (self-fencing), so that they are gone before the lease can expire and
/// another host claim the job.
///
/// A lease is confirmed at the instant the request that set it (the claim,
/// or a renewal that came back renewed) was *sent*: the server set its
/// expiry at that instant or later, so it cannot expire elsewhere before
/// that instant plus `lease`, whatever the clocks of the hosts say. Times
/// are read on the monotonic clock, never the wall clock. The engine looks
/// every `checkInterval`; a run unconfirmed for `stopAfter` gets SIGTERM to
/// its process groups, then SIGKILL after `grace`; so its processes are
/// killed before `lease − margin` has passed since the confirmation:
///
///     stopAfter + checkInterval + grace + margin = lease
struct LeaseFence: Sendable, Equatable {
    let lease: Duration
    /// How often the engine compares each run's confirmation with now.
    let checkInterval: Duration
    /// Between SIGTERM and SIGKILL when fencing: the kill grace, a sixth of the lease at most.
    let grace: Duration
    /// Left after the SIGKILL for the processes to die before the lease can expire.
    let margin: Duration
    /// How long after a confirmation the run is stopped.
    let stopAfter: Duration

    init(lease: Duration, killGrace: Duration) {
        self.lease = lease
        checkInterval = lease / 12
        margin = lease / 12
        grace = min(killGrace, lease / 6)
        stopAfter = lease - checkInterval - margin - grace
    }

    /// Whether a run whose lease was confirmed at `confirmed` must stop at `now`.
    func mustStop(confirmed: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        now - confirmed >= stopAfter
    }
}
