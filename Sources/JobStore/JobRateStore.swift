import Foundation

/// Rate limits (`rate:`, see ``StartRate``): when a job held back by its
/// rate may start, for those that say why a job waits.
public protocol JobRateStore: Sendable {
    /// When the next slot of job `id`'s rate opens: the time by the
    /// database's clock at which fewer than `rate.count` starts of its
    /// definition (and rate key) fall in the window; `nil` when one is free
    /// now (or there is no such job). Another host may take that slot first.
    func nextRateSlot(forJob id: Int64, rate: StartRate) async throws -> Date?
}
