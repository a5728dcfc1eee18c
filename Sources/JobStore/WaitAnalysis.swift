import Foundation

/// Judges why pending jobs wait from what a store read in a few queries
/// (``WaitFacts``), the way a claim would meet them: a wait for other jobs,
/// then a delay, a pause, the pool not claimed here, the concurrency limits
/// (the pool's, the definition's, the key's, then the key's order), then
/// the pool's size on the hosts running it. Pure: no I/O, so both stores
/// judge alike.
package struct WaitAnalysis {
    /// A pending job as the judgement needs it.
    package struct Pending: Sendable, Hashable {
        package var id: Int64
        package var definition: String
        package var pool: String
        package var priority: Int
        package var runAt: Date
        package var waitingOn: Int
        /// The stage a parent waits at for its children; nil for a job that waits for `--after` jobs.
        package var waitStage: Int?
        package var limitKey: String?

        package init(
            id: Int64, definition: String, pool: String, priority: Int, runAt: Date, waitingOn: Int = 0,
            waitStage: Int? = nil, limitKey: String? = nil
        ) {
            self.id = id
            self.definition = definition
            self.pool = pool
            self.priority = priority
            self.runAt = runAt
            self.waitingOn = waitingOn
            self.waitStage = waitStage
            self.limitKey = limitKey
        }

        /// Whether it comes before `other` in a claim's order: priority, then the oldest `runAt`, then id.
        package func precedes(_ other: Pending) -> Bool {
            if priority != other.priority { return priority > other.priority }
            if runAt != other.runAt { return runAt < other.runAt }
            return id < other.id
        }
    }

    /// Running jobs under live leases, grouped.
    package struct Running: Sendable, Hashable {
        package var pool: String
        package var definition: String
        package var limitKey: String?
        package var owner: String
        package var count: Int

        package init(pool: String, definition: String, limitKey: String?, owner: String, count: Int) {
            self.pool = pool
            self.definition = definition
            self.limitKey = limitKey
            self.owner = owner
            self.count = count
        }
    }

    let rules: WaitRules
    let now: Date
    private var pausedPools: [String: Pause] = [:]
    private var pausedDefinitions: [String: Pause] = [:]
    /// Running jobs with a limit key, by definition; by (definition, key); by pool.
    private var limitedByDefinition: [String: Int] = [:]
    private var limitedByKey: [FlowGate.Slot: Int] = [:]
    private var limitedByPool: [String: Int] = [:]
    /// Every running job, by pool and owner.
    private var byHost: [String: [String: Int]] = [:]

    /// - Parameters:
    ///   - pauses: the pauses that hold at `now`.
    ///   - running: the running jobs under live leases of the pools concerned.
    package init(rules: WaitRules, now: Date, pauses: [Pause], running: [Running]) {
        self.rules = rules
        self.now = now
        for pause in pauses where pause.holds(at: now) {
            switch pause.scope {
            case .pool: pausedPools[pause.name] = pause
            case .definition: pausedDefinitions[pause.name] = pause
            case .schedule: break
            }
        }
        for group in running {
            byHost[group.pool, default: [:]][group.owner, default: 0] += group.count
            guard let key = group.limitKey else { continue }
            limitedByDefinition[group.definition, default: 0] += group.count
            limitedByKey[FlowGate.Slot(definition: group.definition, key: key), default: 0] += group.count
            limitedByPool[group.pool, default: 0] += group.count
        }
    }

    /// The definitions with a per-key limit, by name: the stores read the
    /// first jobs of their keys in claim order (``reason(_:after:keyHeads:)``).
    package static func perKeyLimits(_ rules: WaitRules) -> [String: Int] {
        var limits: [String: Int] = [:]
        for flow in rules.flows.values {
            for (definition, limit) in flow.limits {
                if let perKey = limit.perKey { limits[definition] = perKey }
            }
        }
        return limits
    }

    /// The definitions with a rate (`rate:`), by name.
    package static func rates(_ rules: WaitRules) -> [String: StartRate] {
        var rates: [String: StartRate] = [:]
        for flow in rules.flows.values { rates.merge(flow.rates) { _, new in new } }
        return rates
    }

    /// The definitions whose runnable jobs ``count(_:usedRates:)`` needs
    /// by limit key: those with a per-key limit or a rate per key.
    package static func keyedDefinitions(_ rules: WaitRules) -> [String] {
        Set(perKeyLimits(rules).keys).union(rates(rules).filter(\.value.perKey).keys).sorted()
    }

    /// Why `job` waits.
    /// - Parameters:
    ///   - after: the jobs it runs after that have not ended (a job waiting for `--after` jobs).
    ///   - keyHeads: of its key, the runnable pending jobs first in claim order (at most the per-key limit).
    package func reason(_ job: Pending, after: [Int64] = [], keyHeads: [Pending] = []) -> WaitReason {
        if job.waitingOn > 0 {
            if let stage = job.waitStage { return .children(stage: stage, left: job.waitingOn) }
            return .after(jobs: after)
        }
        if job.runAt > now { return .delayed(until: job.runAt) }
        if let held = held(job) { return held }
        let flow = rules.flows[job.pool] ?? .unlimited
        if let limit = flow.limits[job.definition], let perKey = limit.perKey {
            let key = job.limitKey ?? ""
            let running = limitedByKey[FlowGate.Slot(definition: job.definition, key: key), default: 0]
            if running >= perKey { return .keyLimitFull(key: key, running: running, limit: perKey) }
            let ahead = keyHeads.filter { $0.id != job.id && $0.precedes(job) }
            if let first = ahead.first, running + ahead.count >= perKey {
                return .turnInKey(key: key, ahead: first.id)
            }
        }
        return poolFull(job.pool) ?? .ready
    }

    /// What holds every runnable job of `definition` in `pool` alike: a
    /// pause, the pool not claimed here, a global limit.
    private func held(_ job: Pending) -> WaitReason? {
        if let pause = pausedPools[job.pool] ?? pausedDefinitions[job.definition] { return .paused(pause) }
        guard rules.poolSizes[job.pool] != nil else { return .poolNotConfigured(pool: job.pool) }
        let flow = rules.flows[job.pool] ?? .unlimited
        if let limit = flow.pool, limitedByPool[job.pool, default: 0] >= limit {
            return .limitFull(.pool(job.pool), running: limitedByPool[job.pool, default: 0], limit: limit)
        }
        if let global = flow.limits[job.definition]?.global, limitedByDefinition[job.definition, default: 0] >= global {
            return .limitFull(
                .definition(job.definition), running: limitedByDefinition[job.definition, default: 0], limit: global)
        }
        return nil
    }

    private func poolFull(_ pool: String) -> WaitReason? {
        guard let size = rules.poolSizes[pool], let hosts = byHost[pool], !hosts.isEmpty,
            hosts.values.allSatisfy({ $0 >= size })
        else { return nil }
        let loads = hosts.map { WaitReason.HostLoad(owner: $0.key, running: $0.value) }.sorted { $0.owner < $1.owner }
        return .poolFull(pool: pool, size: size, hosts: loads)
    }

    // MARK: Counting by reason

    /// Pending jobs counted alike, for ``count(_:)``: of one pool and
    /// definition, in one state of waiting, of one key when the definition
    /// has a per-key limit.
    package struct Group: Sendable, Hashable {
        package enum Waiting: Sendable, Hashable {
            case children, after, delayed, runnable

            /// The stores' SQL numbers the states: 0 children, 1 after, 2 delayed, else runnable.
            package init(code: Int) {
                switch code {
                case 0: self = .children
                case 1: self = .after
                case 2: self = .delayed
                default: self = .runnable
                }
            }
        }

        package var pool: String
        package var definition: String
        package var waiting: Waiting
        /// The limit key, for the runnable jobs of a definition with a per-key
        /// limit or a rate per key (``keyedDefinitions(_:)``).
        package var key: String?
        package var count: Int

        package init(pool: String, definition: String, waiting: Waiting, key: String?, count: Int) {
            self.pool = pool
            self.definition = definition
            self.waiting = waiting
            self.key = key
            self.count = count
        }
    }

    /// How many pending jobs wait for each reason, by the same judgement
    /// as ``reason(_:after:keyHeads:)`` gives each job: of a key's `n`
    /// runnable jobs under a per-key limit with `free` slots, the first
    /// `free` go on to the pool's judgement and the rest wait their turn.
    /// The jobs the pool's judgement finds ready wait for their rate when
    /// their rate slot (definition, and rate key under `rate-key:`) is in
    /// `usedRates`, the slots whose starts in the window reach the rate, as
    /// ``JobRateStore/withRates(_:of:rules:)`` says of each job.
    package func count(_ groups: [Group], usedRates: Set<FlowGate.Slot> = []) -> [WaitReason.Code: Int] {
        var counts: [WaitReason.Code: Int] = [:]
        for group in groups where group.count > 0 {
            switch group.waiting {
            case .children: counts[.children, default: 0] += group.count
            case .after: counts[.after, default: 0] += group.count
            case .delayed: counts[.delayed, default: 0] += group.count
            case .runnable:
                let probe = Pending(
                    id: 0, definition: group.definition, pool: group.pool, priority: 0, runAt: now,
                    limitKey: group.key)
                if let held = held(probe) {
                    counts[held.code, default: 0] += group.count
                    continue
                }
                var going = group.count
                if let perKey = (rules.flows[group.pool] ?? .unlimited).limits[group.definition]?.perKey {
                    let running = limitedByKey[
                        FlowGate.Slot(definition: group.definition, key: group.key ?? ""), default: 0]
                    if running >= perKey {
                        counts[.keyLimit, default: 0] += going
                        continue
                    }
                    let free = perKey - running
                    if going > free {
                        counts[.turn, default: 0] += going - free
                        going = free
                    }
                }
                if let full = poolFull(group.pool) {
                    counts[full.code, default: 0] += going
                } else if let rate = rules.flows[group.pool]?.rates[group.definition],
                    usedRates.contains(
                        FlowGate.Slot(definition: group.definition, key: rate.key(limitKey: group.key ?? "")))
                {
                    counts[.rate, default: 0] += going
                } else {
                    counts[.ready, default: 0] += going
                }
            }
        }
        return counts
    }
}
