import Foundation

/// Why a pending job is not running yet: the first thing that holds it
/// back, in the order a claim meets them (see ``JobReadStore/waitReasons(of:rules:)``).
public enum WaitReason: Sendable, Hashable {
    /// Submitted with a delay (or retried with a backoff): not runnable before `until`.
    case delayed(until: Date)
    /// A pause of its pool or of its definition holds it.
    case paused(Pause)
    /// A parent waiting for `left` child jobs of stage `stage` (0-based) to end.
    case children(stage: Int, left: Int)
    /// Submitted with `--after`: waits for these jobs to end (those still pending or running).
    case after(jobs: [Int64])
    /// A concurrency limit across all hosts is full: of its pool (`pools: { NAME: { limit: … } }`)
    /// or of its definition (`limit: { global: N }`).
    case limitFull(LimitScope, running: Int, limit: Int)
    /// `limit: { per-key: N }`: `running` jobs of its key run already.
    case keyLimitFull(key: String, running: Int, limit: Int)
    /// `limit: { per-key: N }`: jobs of its key that come before it in the
    /// claim's order take the key's free slots; `ahead` is the first of them.
    case turnInKey(key: String, ahead: Int64)
    /// `rate:`: the definition's starts in the window are used up; the next slot opens at `nextSlot`.
    case rateLimited(nextSlot: Date)
    /// Every host that runs jobs of the pool runs as many as its size
    /// (this host's `pools:`). The database knows a host only by the jobs
    /// it runs: a host with none running is not seen.
    case poolFull(pool: String, size: Int, hosts: [HostLoad])
    /// The pool is not in this host's jobd.yaml: no jobd with that config claims its jobs.
    case poolNotConfigured(pool: String)
    /// Nothing holds it back: the next claim of its pool takes it.
    case ready

    public enum LimitScope: Sendable, Hashable {
        case pool(String)
        case definition(String)
    }

    /// A host's running jobs of one pool (live leases), by lease owner (`node/pid/tag`).
    public struct HostLoad: Sendable, Hashable {
        public var owner: String
        public var running: Int

        public init(owner: String, running: Int) {
            self.owner = owner
            self.running = running
        }

        /// The node of the owner: jobd writes owners as `node/pid/tag`.
        public var node: String { owner.split(separator: "/", maxSplits: 1).first.map(String.init) ?? owner }
    }

    /// A reason's kind: stable words for a metric's `reason` label and `--json`.
    public enum Code: String, Sendable, Hashable, CaseIterable, Comparable {
        case delayed
        case paused
        case children
        case after
        case limit
        case keyLimit = "key_limit"
        case turn
        case rate
        case poolFull = "pool_full"
        case noPool = "no_pool"
        case ready

        public static func < (lhs: Code, rhs: Code) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    public var code: Code {
        switch self {
        case .delayed: .delayed
        case .paused: .paused
        case .children: .children
        case .after: .after
        case .limitFull: .limit
        case .keyLimitFull: .keyLimit
        case .turnInKey: .turn
        case .rateLimited: .rate
        case .poolFull: .poolFull
        case .poolNotConfigured: .noPool
        case .ready: .ready
        }
    }

    /// A few words for a table's column: `delayed`, `key acme 1/1`, `pool full`.
    /// Names (keys, pools) are as stored: the caller escapes them for where it shows them.
    public var short: String {
        switch self {
        case .delayed: "delayed"
        case .paused(let pause): "paused (\(pause.scope.rawValue))"
        case .children(_, let left): "\(left) child\(left == 1 ? "" : "ren")"
        case .after(let jobs): jobs.count == 1 ? "after \(jobs[0])" : "after \(jobs.count) jobs"
        case .limitFull(_, let running, let limit): "limit \(running)/\(limit)"
        case .keyLimitFull(let key, let running, let limit): "key \(Self.cut(key)) \(running)/\(limit)"
        case .turnInKey(let key, _): "turn in key \(Self.cut(key))"
        case .rateLimited: "rate limit"
        case .poolFull: "pool full"
        case .poolNotConfigured: "no pool"
        case .ready: "ready"
        }
    }

    /// A sentence for a job's page (`jobctl status`, the dashboard).
    public var long: String {
        switch self {
        case .delayed(let until):
            return "delayed until \(Timestamp.text(until))"
        case .paused(let pause):
            let until = pause.until.map { "until \(Timestamp.text($0))" } ?? "until resumed"
            let reason = pause.reason.map { ": \($0)" } ?? ""
            return "paused: \(pause.scope.rawValue) \(pause.name) was paused by \(pause.actor) \(until)\(reason)"
        case .children(let stage, let left):
            return "waiting for \(left) child job\(left == 1 ? "" : "s") of stage \(stage + 1) to end"
        case .after(let jobs):
            guard !jobs.isEmpty else { return "waiting for the jobs it runs after to end" }
            let ids = jobs.map(String.init).joined(separator: ", ")
            return
                "waiting for job\(jobs.count == 1 ? "" : "s") \(ids) to end (it runs after \(jobs.count == 1 ? "it" : "them"))"
        case .limitFull(.pool(let pool), let running, let limit):
            return "limit of pool \(pool) across all hosts full (\(running)/\(limit) running)"
        case .limitFull(.definition(let definition), let running, let limit):
            return "global limit of \(definition) full (\(running)/\(limit) running across all hosts)"
        case .keyLimitFull(let key, let running, let limit):
            return "limit of key \(Self.quoted(key)) full (\(running)/\(limit) running)"
        case .turnInKey(let key, let ahead):
            return "waiting for its turn in key \(Self.quoted(key)): job \(ahead) comes first"
        case .rateLimited(let next):
            return "rate limit: next slot at \(Timestamp.text(next))"
        case .poolFull(let pool, let size, let hosts):
            let loads = hosts.map { "\($0.node) \($0.running)/\(size)" }.joined(separator: ", ")
            return "pool \(pool) full on every host that runs its jobs (\(loads))"
        case .poolNotConfigured(let pool):
            return "pool \(pool) is not in jobd.yaml: no jobd with this config claims its jobs"
        case .ready:
            return "ready: the next claim of its pool takes it"
        }
    }

    private static func quoted(_ key: String) -> String { key.isEmpty ? "(none)" : "\"\(key)\"" }

    private static func cut(_ key: String) -> String {
        key.isEmpty ? "(none)" : key.count > 16 ? String(key.prefix(15)) + "…" : key
    }
}

/// What the reasons are judged against: what a jobd with this config
/// claims by — each pool's size on a host and the concurrency limits of
/// its pools and definitions (``ClaimFlow``). The store knows neither.
public struct WaitRules: Sendable, Hashable {
    /// Jobs of each pool one jobd runs at once (`pools:`).
    public var poolSizes: [String: Int]
    /// By pool; a pool not named here has no limit.
    public var flows: [String: ClaimFlow]

    public init(poolSizes: [String: Int], flows: [String: ClaimFlow] = [:]) {
        self.poolSizes = poolSizes
        self.flows = flows
    }
}

extension JobReadStore {
    /// Why pending job `id` waits; nil when it is not pending (or not there).
    public func waitReason(of id: Int64, rules: WaitRules) async throws -> WaitReason? {
        try await waitReasons(of: [id], rules: rules)[id]
    }
}
