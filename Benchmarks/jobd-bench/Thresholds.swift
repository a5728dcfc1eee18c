/// The bounds jobd-bench holds each figure to.
enum Thresholds {
    /// The target for the p50 of submit-to-start latency on an idle
    /// jobd (0.7–0.8 ms measured at load 5–7, 0.7–0.9 ms at load 17–33).
    static let latencyP50 = 5.0
    /// The target is p99 ≤ 20 ms on an idle machine: 4.9–7.3 ms at load
    /// 5–7, but 17–52 ms at load 17–33, where the slowest jobs wait for a
    /// core. The bound is 100 ms: what it catches is jobs left to the 5 s
    /// poll (a nudge missed for one job in a hundred).
    static let latencyP99 = 100.0
    /// "No CPU use to speak of" while idle: 0.1–0.4 % of a core measured,
    /// bound at 1 %.
    static let idleCPUPercent = 1.0
    /// Resident growth per pending job from N to 2N delayed jobs: jobd
    /// keeps no pending job in memory, but SQLite's read caches (1 MiB each)
    /// fill as the table grows: 10 bytes a job from 100,000 to 200,000, 19
    /// from 50,000 to 100,000 (--quick). A claim that walked every delayed
    /// job grew the writer's cache by ~100 bytes a job.
    static let residentBytesPerPendingJob = 48.0
}
