import Foundation

extension JobRateStore {
    /// `reasons`, with each job of `jobs` that is otherwise ready said to
    /// wait for its rate when its definition's rate (in `rules`) has no
    /// slot free now: one read per definition and rate key, not per job.
    package func withRates(
        _ reasons: [Int64: WaitReason], of jobs: [WaitAnalysis.Pending], rules: WaitRules
    ) async throws -> [Int64: WaitReason] {
        var reasons = reasons
        var nextSlots: [FlowGate.Slot: Date?] = [:]
        for job in jobs {
            guard case .ready? = reasons[job.id], let rate = rules.flows[job.pool]?.rates[job.definition] else {
                continue
            }
            let slot = FlowGate.Slot(definition: job.definition, key: rate.perKey ? job.limitKey ?? "" : "")
            let next: Date?
            if let known = nextSlots[slot] {
                next = known
            } else {
                next = try await nextRateSlot(forJob: job.id, rate: rate)
                nextSlots[slot] = next
            }
            if let next { reasons[job.id] = .rateLimited(nextSlot: next) }
        }
        return reasons
    }
}
