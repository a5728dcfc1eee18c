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

    public init(limits: [String: ConcurrencyLimit] = [:]) {
        self.limits = limits.filter { !$0.value.isUnlimited }
    }

    /// No limit: the claim takes the first runnable jobs, as it always did.
    public static let unlimited = ClaimFlow()

    public var isUnlimited: Bool { limits.isEmpty }

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

/// Decides, job after job in the claim's order, which jobs a claim takes
/// under a ``ClaimFlow``: a job whose definition or key is full is passed
/// over, and the jobs behind it are still taken (no head-of-line blocking).
/// Each job taken fills its slot for the jobs after it, so `perKey: 1`
/// takes only the first runnable job of each free key: its jobs run one
/// at a time, in the claim's order.
package struct FlowGate {
    private let flow: ClaimFlow
    private var byDefinition: [String: Int] = [:]
    private var byKey: [Slot: Int] = [:]

    private struct Slot: Hashable {
        var definition: String
        var key: String
    }

    /// `running`: the running jobs under live leases of the limited
    /// definitions, counted by (definition, limit key).
    package init(flow: ClaimFlow, running: [(definition: String, key: String, count: Int)]) {
        self.flow = flow
        for entry in running {
            byDefinition[entry.definition, default: 0] += entry.count
            byKey[Slot(definition: entry.definition, key: entry.key), default: 0] += entry.count
        }
    }

    /// Whether a job of `definition` with limit key `key` may start now; if
    /// so, it counts as running from here on.
    package mutating func admit(definition: String, key: String) -> Bool {
        guard let limit = flow.limits[definition] else { return true }
        let slot = Slot(definition: definition, key: key)
        if let global = limit.global, byDefinition[definition, default: 0] >= global { return false }
        if let perKey = limit.perKey, byKey[slot, default: 0] >= perKey { return false }
        byDefinition[definition, default: 0] += 1
        byKey[slot, default: 0] += 1
        return true
    }
}
