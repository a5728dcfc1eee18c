import JobConfig
import JobStore

extension ClaimFlow {
    /// The concurrency limits and rates each pool's claims honour: its
    /// definitions' `limit:` and `rate:`, and the pool's own limit (`pools:
    /// { NAME: { limit: … } }`); a pool with none is absent.
    public static func byPool(_ definitions: [JobDefinition], poolLimits: [String: Int]) -> [String: ClaimFlow] {
        var limits: [String: [String: ConcurrencyLimit]] = [:]
        var rates: [String: [String: StartRate]] = [:]
        for definition in definitions {
            if let limit = definition.concurrencyLimit {
                limits[definition.pool, default: [:]][definition.name] = limit
            }
            if let rate = definition.startRate { rates[definition.pool, default: [:]][definition.name] = rate }
        }
        var flows: [String: ClaimFlow] = [:]
        for pool in Set(limits.keys).union(poolLimits.keys).union(rates.keys) {
            flows[pool] = ClaimFlow(limits: limits[pool] ?? [:], pool: poolLimits[pool], rates: rates[pool] ?? [:])
        }
        return flows
    }
}

extension WaitRules {
    /// What a jobd with `config` and `definitions` claims by.
    public init(config: DaemonConfiguration, definitions: [JobDefinition]) {
        self.init(
            poolSizes: config.pools, flows: ClaimFlow.byPool(definitions, poolLimits: config.poolLimits))
    }
}
