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
        job.limitKey = limitKey(input: input, idempotencyKey: idempotencyKey)
        job.unique = uniqueKey(input: input, idempotencyKey: idempotencyKey)
        return job
    }

    /// The key `unique:` holds a job under (`jobs.unique_key`): `nil`
    /// without `unique:`; `""` without a `--key`, or when the input has no
    /// value at the key's JSON path (such jobs share one key).
    public func uniqueKey(input: Data?, idempotencyKey: String?) -> UniqueKey? {
        guard let unique else { return nil }
        let onConflict: UniqueKey.OnConflict =
            switch unique.onConflict {
            case .skip: .skip
            case .replaceInput: .replaceInput
            case .reschedule: .reschedule
            }
        return UniqueKey(
            key: Self.key(from: unique.key, input: input, idempotencyKey: idempotencyKey),
            whileRunning: unique.whileRunning, period: unique.period, onConflict: onConflict)
    }

    /// The key `limit:` and `rate:` count a job under (`jobs.limit_key`,
    /// from `limit`'s `key` or `rate-key`, which are the same when both are
    /// given): `nil` without `limit:` and `rate-key:` (`""` in a pool with a
    /// limit), `""` without a key or when the input has no value at the
    /// key's JSON path (such jobs share one key).
    public func limitKey(input: Data?, idempotencyKey: String?) -> String? {
        let source = limit?.key ?? rate?.key
        guard limit != nil || source != nil else { return poolLimited ? "" : nil }
        guard let source else { return "" }
        return Self.key(from: source, input: input, idempotencyKey: idempotencyKey)
    }

    /// A key from the input, a JSON path of it, or the job's `--key`;
    /// `""` when there is none.
    static func key(from source: FlowLimit.KeySource, input: Data?, idempotencyKey: String?) -> String {
        switch source {
        case .key: return idempotencyKey ?? ""
        case .input: return input.map { String(decoding: $0, as: UTF8.self) } ?? ""
        case let .json(path):
            guard let input, let value = try? Transform.json(path).apply(Array(input)) else { return "" }
            return String(decoding: value, as: UTF8.self)
        }
    }

    /// The limits the claim honours for this definition.
    public var concurrencyLimit: ConcurrencyLimit? {
        guard let limit else { return nil }
        return ConcurrencyLimit(
            global: limit.global, perKey: limit.perKey, order: limit.order == .fair ? .fair : .fifo)
    }

    /// The rate the claim honours for this definition.
    public var startRate: StartRate? {
        guard let rate else { return nil }
        return StartRate(count: rate.count, window: rate.window, perKey: rate.key != nil)
    }
}
