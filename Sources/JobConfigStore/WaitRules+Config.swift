import JobConfig
import JobStore

extension ClaimFlow {
    /// The concurrency limits each pool's claims honour: its definitions'
    /// `limit:` and the pool's own (`pools: { NAME: { limit: … } }`); a
    /// pool with neither is absent.
    public static func byPool(_ definitions: [JobDefinition], poolLimits: [String: Int]) -> [String: ClaimFlow] {
        var limits: [String: [String: ConcurrencyLimit]] = [:]
        for definition in definitions {
            guard let limit = definition.concurrencyLimit else { continue }
            limits[definition.pool, default: [:]][definition.name] = limit
        }
        var flows: [String: ClaimFlow] = [:]
        for pool in Set(limits.keys).union(poolLimits.keys) {
            flows[pool] = ClaimFlow(limits: limits[pool] ?? [:], pool: poolLimits[pool])
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
