/// The bounds process-bench holds each figure to: a runner's rate as a share
/// of a baseline measured in the same rounds (median of the rounds), so the
/// bound holds on a slower machine.
enum Thresholds {
    /// Percent of the plain loop, by series name: one at a time of the loop
    /// on one thread, 16 in flight of the loop on as many threads as run
    /// fastest. Guards against a regression, set just under what the shared
    /// 2-core VM gives at load 4–22: one at a time 85–135 %, 16 in flight
    /// 79–96 %.
    static let shareOfPlainLoop: [String: Double] = [
        "ProcessRunner, 1 at a time": 80,
        "ProcessRunner, 16 at a time": 75,
    ]
}
