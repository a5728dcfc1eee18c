import Foundation
import JobConfig
import JobStore

/// Jobs and stages as JSON: the field names of DESIGN.md's jobctl section
/// first, in its order, then jobctl's additions (docs/jobctl.md).
enum JobJSON {
    static func job(_ job: Job) -> [(String, JSON)] {
        [
            ("id", .int(job.id)),
            ("definition", .string(job.definition)),
            ("state", .string(job.state.rawValue)),
            ("attempt", .int(job.attempt)),
            ("input", Formatting.valueJSON(job.input)),
            ("result", Formatting.valueJSON(job.result)),
            ("error", .optional(job.error)),
            ("created_at", Formatting.timestamp(job.createdAt)),
            ("started_at", Formatting.timestamp(job.startedAt)),
            ("finished_at", Formatting.timestamp(job.finishedAt)),
            ("scheduled_for", Formatting.timestamp(job.scheduledFor)),
            ("duration_ms", .optional(Formatting.milliseconds(from: job.startedAt, to: job.finishedAt))),
            ("pool", .string(job.pool)),
            ("priority", .int(job.priority)),
            ("idempotency_key", .optional(job.idempotencyKey)),
            ("run_at", Formatting.timestamp(job.runAt)),
            ("cancel_requested", .bool(job.cancelRequested)),
            ("claims", .int(job.claims)),
            ("node", .optional(job.leaseOwner.map(LeaseOwner.node(of:)))),
            ("lease_owner", .optional(job.leaseOwner)),
            ("parent_id", .optional(job.parentID)),
            ("parent_stage", .optional(job.parentStage.map(Int64.init))),
            ("item_index", .optional(job.itemIndex.map(Int64.init))),
            ("waiting_on", .int(job.waitingOn)),
        ]
    }

    static func stage(_ stage: Stage) -> JSON {
        .fields([
            ("position", .int(stage.position)),
            ("name", .string(stage.name)),
            ("kind", .string(stage.kind)),
            ("state", .string(stage.state.rawValue)),
            ("attempts", .int(stage.attempts)),
            ("value", Formatting.valueJSON(stage.value)),
            ("error", .optional(stage.error)),
            ("exit_code", .optional(stage.exitCode.map(Int64.init))),
            ("error_code", .optional(stage.errorCode)),
            ("started_at", Formatting.timestamp(stage.startedAt)),
            ("finished_at", Formatting.timestamp(stage.finishedAt)),
            ("duration_ms", .optional(Formatting.milliseconds(from: stage.startedAt, to: stage.finishedAt))),
        ])
    }

    /// A job with its stages, and — when given — its earlier attempts and
    /// events, and how it was fired (`status`: `fired_by` after
    /// `scheduled_for`, null for a job the calendar fired or not scheduled).
    static func detail(
        _ detail: JobDetail, history: [JobAttempt]? = nil, events: [JobEvent]? = nil,
        children: ChildrenSummary? = nil, wait: WaitReason? = nil, firing: ScheduleFiring?? = nil
    ) -> JSON {
        var members = job(detail.job)
        if let firing, let place = members.firstIndex(where: { $0.0 == "scheduled_for" }) {
            members.insert(("fired_by", .optional(firing?.trigger.rawValue)), at: place + 1)
        }
        if detail.job.state == .pending { members.append(("wait_reason", wait.map(waitReason) ?? .null)) }
        members.append(("stages", .array(detail.stages.map(stage))))
        if let children { members.append(("children", children.json)) }
        if let history {
            members.append(("history", .array(history.map(attempt))))
        }
        if let events {
            members.append(("events", .array(events.map(event))))
        }
        return .fields(members)
    }

    /// Why a pending job waits: a stable code, a few words, a sentence.
    static func waitReason(_ reason: WaitReason) -> JSON {
        .fields([
            ("code", .string(reason.code.rawValue)), ("short", .string(reason.short)), ("text", .string(reason.long)),
        ])
    }

    static func attempt(_ attempt: JobAttempt) -> JSON {
        .fields([
            ("attempt", .int(attempt.attempt)),
            ("state", .string(attempt.state.rawValue)),
            ("result", Formatting.valueJSON(attempt.result)),
            ("error", .optional(attempt.error)),
            ("started_at", Formatting.timestamp(attempt.startedAt)),
            ("finished_at", Formatting.timestamp(attempt.finishedAt)),
            ("stages", .array(attempt.stages.map(stage))),
        ])
    }

    static func event(_ event: JobEvent) -> JSON {
        .fields([
            ("id", .int(event.id)),
            ("position", .optional(event.position.map(Int64.init))),
            ("kind", .string(event.kind)),
            ("message", .string(event.message)),
            ("created_at", Formatting.timestamp(event.createdAt)),
        ])
    }
}
