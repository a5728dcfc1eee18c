/// What a stage is in the promise chain: the key naming it in YAML and the
/// PromiseKit method the engine chains for it.
public enum StageKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case firstly, then, map, get, tap, when, race, each, recover, done, `catch`, ensure, finally

    /// When a stage of this kind runs.
    public enum Trigger: Sendable, Hashable {
        /// Only while the chain so far is fulfilled.
        case fulfilled
        /// Only once the chain so far is rejected.
        case rejected
        /// Whatever the outcome so far.
        case always
    }

    public var description: String { rawValue }

    public var trigger: Trigger {
        switch self {
        case .firstly, .then, .map, .get, .when, .race, .each, .done: return .fulfilled
        case .recover, .catch: return .rejected
        case .tap, .ensure, .finally: return .always
        }
    }

    /// The `Q` queue a stage of this kind runs on when it has no `on:`,
    /// following PromiseKit's `conf.Q`: bodies that produce the next value
    /// (`firstly`, `then`, `map`, `get`, `tap`, `recover`, `when`, `race`)
    /// run on `map`; terminal handlers (`done`, `catch`, `ensure`, `finally`)
    /// run on `return`.
    public var defaultQueue: String {
        switch self {
        case .firstly, .then, .map, .get, .tap, .recover, .when, .race, .each: return DaemonConfiguration.mapQueue
        case .done, .catch, .ensure, .finally: return DaemonConfiguration.returnQueue
        }
    }

    /// Whether the stage's own output becomes the chain's value. `get`,
    /// `tap`, `catch`, `ensure` and `finally` pass the chain's outcome on
    /// unchanged whatever their action prints.
    public var replacesValue: Bool {
        switch self {
        case .firstly, .then, .map, .when, .race, .each, .recover, .done: return true
        case .get, .tap, .catch, .ensure, .finally: return false
        }
    }
}
