import JobValues

/// `rate: N/WINDOW` of a job definition: at most `count` of its jobs start
/// (are claimed for an attempt) in any window of length `window`, across
/// all hosts; with `rate-key:`, that many per key.
public struct FlowRate: Sendable, Hashable {
    public var count: Int
    public var window: Duration
    /// Where a job's rate key comes from (`rate-key:`); `nil`: one rate for
    /// the whole definition.
    public var key: FlowLimit.KeySource?

    public init(count: Int, window: Duration, key: FlowLimit.KeySource? = nil) {
        self.count = count
        self.window = window
        self.key = key
    }

    /// The largest `N` accepted.
    public static let maxCount = 1_000_000
    /// The shortest window accepted: timestamps keep milliseconds, and a
    /// window of a few of them would be a rate no claim can keep to.
    public static let minWindow = Duration.milliseconds(100)
    /// The longest window accepted.
    public static let maxWindow = Duration.seconds(86_400)
}
