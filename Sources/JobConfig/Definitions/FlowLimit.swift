/// `limit:` of a job definition: how many of its jobs may run at once
/// across all hosts, in all (`global`) and per limit key (`perKey`).
public struct FlowLimit: Sendable, Hashable {
    /// Where a job's limit key comes from, computed when it is submitted.
    public enum KeySource: Sendable, Hashable, CustomStringConvertible {
        /// The whole input, as text.
        case input
        /// A value of the JSON input (`{json: .customer}`): a string as its
        /// text, anything else as compact JSON.
        case json(JSONPath)
        /// The job's `--key` (its idempotency key).
        case key

        public var description: String {
            switch self {
            case .input: "input"
            case let .json(path): "{json: \(path)}"
            case .key: "key"
            }
        }
    }

    public enum Order: String, Sendable, Hashable, CaseIterable {
        /// Priority, then the oldest: a key's jobs in submission order.
        case fifo
        /// Round-robin across keys: each key's first job, then each key's second, …
        case fair
    }

    public var global: Int?
    public var perKey: Int?
    /// Needed when `perKey` or `order: fair` is given.
    public var key: KeySource?
    public var order: Order

    public init(global: Int? = nil, perKey: Int? = nil, key: KeySource? = nil, order: Order = .fifo) {
        self.global = global
        self.perKey = perKey
        self.key = key
        self.order = order
    }

    /// The largest `global` or `per-key` accepted.
    public static let maxSlots = 1_000_000
}
