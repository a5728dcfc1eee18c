/// `unique:` of a job definition: at most one job per key, held while the
/// job is pending (and, by default, running), and with `period` for at
/// least that long after its submit.
public struct Uniqueness: Sendable, Hashable {
    /// What a submit that finds its key held does to the job holding it.
    public enum OnConflict: String, Sendable, Hashable, CaseIterable {
        /// Nothing: the existing job is returned as it is.
        case skip
        /// A pending holder gets the new submit's input.
        case replaceInput = "replace-input"
        /// A pending holder gets the new submit's run time.
        case reschedule
    }

    /// Where a job's key comes from, as for `limit:`.
    public var key: FlowLimit.KeySource
    /// Whether a running job holds its key (`while: [pending, running]`);
    /// a pending job always does.
    public var whileRunning: Bool
    /// How long after its submit a job holds its key at least, ended or not.
    public var period: Duration?
    public var onConflict: OnConflict

    public init(
        key: FlowLimit.KeySource, whileRunning: Bool = true, period: Duration? = nil, onConflict: OnConflict = .skip
    ) {
        self.key = key
        self.whileRunning = whileRunning
        self.period = period
        self.onConflict = onConflict
    }
}
