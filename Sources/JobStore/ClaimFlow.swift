/// The concurrency limits a claim honours besides the number of jobs asked
/// for: per definition, a limit across all hosts (`global`) and one per
/// limit key (`perKey`).
///
/// A slot is a running job under a live lease: a job whose lease expired
/// (its host died or stalled) no longer holds one, so nothing leaks.
/// Every host must claim with the same limits (the same definitions).
public struct ClaimFlow: Sendable, Hashable {
    /// By definition name; a definition not named here is not limited.
    public var limits: [String: ConcurrencyLimit]
    /// Jobs of the pool running at once across all hosts (`pools: { NAME:
    /// { limit: { global: N } } }`); only jobs with a limit key count, as
    /// every job of a limited pool has.
    public var pool: Int?
    /// By definition name: how many of its jobs may start per window; a
    /// definition not named here has no rate.
    public var rates: [String: StartRate]

    public init(limits: [String: ConcurrencyLimit] = [:], pool: Int? = nil, rates: [String: StartRate] = [:]) {
        self.limits = limits.filter { !$0.value.isUnlimited }
        self.pool = pool
        self.rates = rates
    }

    /// No limit: the claim takes the first runnable jobs, in its order.
    public static let unlimited = ClaimFlow()

    public var isUnlimited: Bool { limits.isEmpty && pool == nil && rates.isEmpty }

    /// Whether some limited definition takes its jobs in `fair` order.
    public var isFair: Bool { limits.values.contains { $0.order == .fair } }
}

/// `limit:` of one definition.
public struct ConcurrencyLimit: Sendable, Hashable {
    public enum Order: String, Sendable, Hashable, CaseIterable {
        /// The claim's order: priority, then the oldest.
        case fifo
        /// Round-robin across keys, each key's jobs in the claim's order.
        case fair
    }

    /// Jobs of the definition running at once across all hosts.
    public var global: Int?
    /// Jobs of one limit key running at once across all hosts.
    public var perKey: Int?
    public var order: Order

    public init(global: Int? = nil, perKey: Int? = nil, order: Order = .fifo) {
        self.global = global
        self.perKey = perKey
        self.order = order
    }

    public var isUnlimited: Bool { global == nil && perKey == nil }
}

/// `rate:` of one definition: at most `count` of its jobs start (are
/// claimed) in any window of length `window`, across all hosts; per limit
/// key when `perKey`.
///
/// A start is a row of `rate_starts` written by the claim that took the
/// job, holding the time its slot frees (the claim's time by the database's
/// clock, plus `window`): a claim takes a job only while fewer than `count`
/// rows of its definition (and key) have not freed yet.
public struct StartRate: Sendable, Hashable {
    public var count: Int
    public var window: Duration
    /// Counted per limit key (`rate-key:`), else once for the definition.
    public var perKey: Bool

    public init(count: Int, window: Duration, perKey: Bool = false) {
        self.count = count
        self.window = window
        self.perKey = perKey
    }

    /// The key a job with limit key `limitKey` counts its start under.
    public func key(limitKey: String) -> String { perKey ? limitKey : "" }
}

/// Decides, job after job in the claim's order, which jobs a claim takes
/// under a ``ClaimFlow``: a job whose definition or key is full is passed
/// over, and the jobs behind it are still taken (no head-of-line blocking).
/// Each job taken fills its slot for the jobs after it, so `perKey: 1`
/// takes only the first runnable job of each free key: its jobs run one
/// at a time, in the claim's order.
///
/// The store tells it the running jobs of each limited definition, then,
/// page by page of candidates, those of the keys it has not counted yet
/// (``uncounted(_:)``, ``count(_:)``): a claim counts the keys it meets,
/// not every running job's.
package struct FlowGate {
    package struct Slot: Hashable, Sendable {
        package var definition: String
        package var key: String

        package init(definition: String, key: String) {
            self.definition = definition
            self.key = key
        }
    }

    private let flow: ClaimFlow
    private var byDefinition: [String: Int]
    private var byKey: [Slot: Int] = [:]
    private var inPool: Int
    private let paused: Set<String>
    /// Starts whose slot has not freed yet, by rated definition and rate key.
    private var started: [Slot: Int] = [:]

    /// `running`: the running jobs under live leases of each limited
    /// definition; `inPool`: of the pool, when it has a limit; `paused`:
    /// the definitions whose jobs no claim takes now (``Pause``).
    package init(flow: ClaimFlow, running: [String: Int], inPool: Int = 0, paused: Set<String> = []) {
        self.flow = flow
        byDefinition = running
        self.inPool = inPool
        self.paused = paused
    }

    /// The keys of `candidates` under a per-key limit whose running jobs
    /// the gate has not been told yet, each once.
    package func uncounted(_ candidates: [Slot]) -> [Slot] {
        var seen: Set<Slot> = []
        return candidates.filter { slot in
            flow.limits[slot.definition]?.perKey != nil && byKey[slot] == nil && seen.insert(slot).inserted
        }
    }

    /// Tells the running jobs under live leases of keys ``uncounted(_:)`` gave.
    package mutating func count(_ running: [Slot: Int]) {
        byKey.merge(running) { _, new in new }
    }

    /// The rate slots (definition, rate key) of `candidates` with a rate
    /// whose starts the gate has not been told yet, each once.
    package func uncountedRates(_ candidates: [Slot]) -> [Slot] {
        var seen: Set<Slot> = []
        return candidates.compactMap { candidate in
            guard let rate = flow.rates[candidate.definition] else { return nil }
            let slot = Slot(definition: candidate.definition, key: rate.key(limitKey: candidate.key))
            return started[slot] == nil && seen.insert(slot).inserted ? slot : nil
        }
    }

    /// Tells the starts not freed yet of rate slots ``uncountedRates(_:)`` gave.
    package mutating func countStarts(_ starts: [Slot: Int]) {
        started.merge(starts) { _, new in new }
    }

    /// Whether a job of `definition` with limit key `key` may start now (not
    /// paused, under its limits and its rate); if so, it counts as running,
    /// and as a start, from here on. A key not counted yet counts as having
    /// none running and no start.
    package mutating func admit(definition: String, key: String) -> Bool {
        if paused.contains(definition) { return false }
        if let pool = flow.pool, inPool >= pool { return false }
        var rateSlot: Slot?
        if let rate = flow.rates[definition] {
            let slot = Slot(definition: definition, key: rate.key(limitKey: key))
            if started[slot, default: 0] >= rate.count { return false }
            rateSlot = slot
        }
        if let limit = flow.limits[definition] {
            let slot = Slot(definition: definition, key: key)
            if let global = limit.global, byDefinition[definition, default: 0] >= global { return false }
            if let perKey = limit.perKey, byKey[slot, default: 0] >= perKey { return false }
            byDefinition[definition, default: 0] += 1
            byKey[slot, default: 0] += 1
        }
        if let rateSlot { started[rateSlot, default: 0] += 1 }
        inPool += 1
        return true
    }
}
