/// The bounds promises-bench holds each figure to.
///
/// A ratio is the median over rounds of (case ÷ raw GCD hop of the same
/// shape, measured a moment before in the same round): it holds on a slower
/// machine and moves less with load than the ratio of the best rounds
/// (under a load average of 15 on the 2-core VM, one lucky round of the
/// raw hop put `map(on: serialQueue)` at 2.4× on the bests and 0.99× on
/// the median). The margin is over what that VM gives while other builds
/// share it, so the bounds catch a doubling of a case's cost, not a slip
/// of 20 % (instruction counts, docs/promises.md, are the tool for those).
enum Thresholds {
    /// Target: 0.6× on a quiet machine. Medians of 0.66–1.62× over 34
    /// quiet runs, 0.77–1.51× at load 10–33: bound at 2×.
    static let mapOnQueue = 2.0
    /// No figure in the issue; medians of 1.51–2.16× over 34 quiet runs,
    /// 0.85–1.94× at load 10–33: bound at 2.5×.
    static let mapOnQueueChain = 2.5
    /// Target: 0.05× on a quiet machine. Medians of 0.08–0.13× over 34
    /// quiet runs, 0.09–0.18× at load 10–18, 0.24× at load 20–33 (the case
    /// itself preempted within its rounds): bound at 0.3×.
    static let mapInline = 0.3
    /// No figure in the issue; medians of 0.40–0.73× quiet, 0.69–1.35× at
    /// load 10–18.
    static let mapInlineChain = 2.0
    /// The issue asked ≤ 1× the raw hop; medians of 0.43–0.77× quiet,
    /// 0.59–1.41× at load 10–18 (one thread against a hop on two, so it
    /// moves with the hop).
    static let pendingDoneFulfil = 2.0
    /// Heap bytes per item, glibc's chunk sizes (16-byte steps) over 100,000
    /// items, plus a few bytes of whatever else the process allocated
    /// meanwhile: 128 for a pending promise with its resolver and a handler
    /// (the bound: 150), 160 for a link of a pending chain (bound
    /// below the next step, 176).
    static let pendingBytes = 150.0
    static let chainLinkBytes = 168.0
}
