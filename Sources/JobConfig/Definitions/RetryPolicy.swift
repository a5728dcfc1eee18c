import JobValues

/// How a stage is retried after its action fails.
///
/// The delay before attempt `n + 1` is `backoff × 2^(n-1)`, capped at
/// `maxBackoff`; with `jitter` the engine waits a uniformly random time
/// between half that delay and all of it.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included: 1 means no retry.
    public var attempts: Int
    /// The delay before the first retry.
    public var backoff: Duration
    /// The ceiling of any one delay.
    public var maxBackoff: Duration
    public var jitter: Bool

    public init(attempts: Int, backoff: Duration, maxBackoff: Duration, jitter: Bool) {
        self.attempts = attempts
        self.backoff = backoff
        self.maxBackoff = maxBackoff
        self.jitter = jitter
    }

    /// What `attempts` may be in a definition.
    public static let attemptsRange = 1...1000

    /// No retry; when `attempts` is raised, 1s doubling up to 1m, jittered.
    public static let `default` = RetryPolicy(attempts: 1, backoff: .seconds(1), maxBackoff: .seconds(60), jitter: true)

    /// The delay after failed attempt `attempt` (1-based) before the next,
    /// before jitter; nil when no attempt follows.
    public func nominalDelay(afterAttempt attempt: Int) -> Duration? {
        guard attempt >= 1, attempt < attempts else { return nil }
        var delay = backoff
        for _ in 1..<attempt {
            if delay >= maxBackoff || delay == .zero { break }
            delay = delay * 2
        }
        return min(delay, maxBackoff)
    }

    /// The delay after failed attempt `attempt` with jitter applied from
    /// `generator`; nil when no attempt follows.
    public func delay(afterAttempt attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration? {
        guard let nominal = nominalDelay(afterAttempt: attempt) else { return nil }
        guard jitter, let ms = nominal.wholeMilliseconds, ms > 1 else { return nominal }
        return .milliseconds(Int64.random(in: (ms / 2)...ms, using: &generator))
    }
}
