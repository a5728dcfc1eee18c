import Foundation
import JobConfig
import JobStore

extension JobDefinition {
    /// The stage plan a job of this definition is submitted with: one
    /// `stages` row per stage, in order.
    public var stagePlans: [StagePlan] {
        stages.map { StagePlan(name: $0.name, kind: $0.kind.rawValue) }
    }

    /// A job of this definition, ready for `JobStore.submit`.
    public func newJob(
        input: Data? = nil, priority: Int = 0, runAt: Date? = nil, idempotencyKey: String? = nil,
        scheduledFor: Date? = nil
    ) -> NewJob {
        var job = NewJob(
            definition: name, pool: pool, input: input, priority: priority, runAt: runAt,
            idempotencyKey: idempotencyKey, stages: stagePlans)
        job.scheduledFor = scheduledFor
        return job
    }
}
