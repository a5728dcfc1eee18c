/// The bounds engine-bench holds each figure to. Rates are medians of
/// rounds interleaved with a baseline measured in the same run, and the
/// bound is a share of that baseline, so it holds on a slower or busier
/// machine; the margin is over what the shared 2-core VM gives.
enum Thresholds {
    /// In-process pipelines, percent of the store driven directly
    /// (StoreCycle: the same claim, 3 stage results and finish per job, no
    /// engine). Issue 4 asks ≥ 10,000 jobs/s on this machine, ~83 % of the
    /// store's ~12,100 on a quiet day; measured 90–127 % at load 12–13
    /// (where the wall-clock rate is 4,000–5,700). Bound at 65 %: the
    /// engine may cost the store half as much again, not more.
    static let inProcessShareOfStoreCycle = 65.0
    /// Process pipelines, percent of the one-thread plain spawn loop, by
    /// series name. Pool 16: issue 4's 80 % (117–146 % at load 12–33,
    /// 83–138 % in earlier runs). Pool 1: 65–67 % quiet, 44–62 % at load
    /// 12–33 (each job waits for its writes in turn); bound at 35 % until
    /// issue 22 raises both against a multi-threaded loop.
    static let shareOfPlainLoop: [String: Double] = [
        "3 × run: [cat], pool 1": 35,
        "3 × run: [cat], pool 16": 80,
    ]
    /// Growth per pending job from N to 2N pending: the engine keeps no
    /// pending job in memory, so only noise of about ±1 MiB remains (±20
    /// bytes a job at N = 50,000). A claim that walked every delayed job
    /// grew resident memory by ~54 bytes a job through SQLite's cache.
    static let heapBytesPerPendingJob = 32.0
    static let residentBytesPerPendingJob = 32.0
}
