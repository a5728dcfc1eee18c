import JobValues

/// What job definitions are checked against: the names jobd.yaml declares,
/// and the store's value cap.
public struct DefinitionContext: Sendable, Hashable {
    /// `Q`'s queue names (a stage's `on:` must be one).
    public var queues: Set<String>
    /// `pools`' names (a job's `pool:` must be one).
    public var pools: Set<String>
    /// `store.value-cap` in bytes: a schedule's `input:` must fit in it.
    public var valueCap: Int
    /// The pools with a limit across hosts: their jobs get a limit key.
    public var limitedPools: Set<String>

    public init(
        queues: Set<String>, pools: Set<String>, valueCap: Int = StoreConfiguration.defaultValueCap.bytes,
        limitedPools: Set<String> = []
    ) {
        self.queues = queues
        self.pools = pools
        self.valueCap = valueCap
        self.limitedPools = limitedPools
    }

    /// The names a config with no `Q` or `pools` has: queues `map` and
    /// `return`, pool `default`.
    public static let defaults = DefinitionContext(
        queues: [DaemonConfiguration.mapQueue, DaemonConfiguration.returnQueue],
        pools: [DaemonConfiguration.defaultPool])
}
