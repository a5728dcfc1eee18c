/// What a stage does. Every action reads the chain's current value (the
/// job's input for the first stage) and produces bytes or an error.
public enum Action: Sendable, Hashable {
    /// Runs `argv[0]` with `argv[1...]` (searched on `PATH` when it has no
    /// slash), never through a shell; stdin is the value, stdout the result.
    case run([String])
    /// Runs `/bin/sh -c SCRIPT`; the value still arrives on stdin, never
    /// inside the script.
    case shell(String)
    /// Passes the value on unchanged after a delay.
    case sleep(Duration)
    /// Rejects with this message.
    case fail(String)
    /// A built-in, in-process transform (in `map` stages only).
    case transform(Transform)
    /// Runs these actions in parallel (`when` only); the value is a JSON
    /// array of their outputs as strings, in order. Fails on the first failure.
    case all([Action])
    /// Runs these actions in parallel (`race` only); the value is the first
    /// output to succeed.
    case any([Action])
    /// Starts child jobs of another definition and joins them (`each`, or
    /// `then` for one child); run by the engine through the store.
    case children(ChildSpec)

    /// The action's YAML key: "run", "shell", "sleep", "fail", "transform",
    /// "all", "any" or "definition".
    public var keyword: String {
        switch self {
        case .run: return "run"
        case .shell: return "shell"
        case .sleep: return "sleep"
        case .fail: return "fail"
        case .transform: return "transform"
        case .all: return "all"
        case .any: return "any"
        case .children: return "definition"
        }
    }

    /// Whether running it starts a child process.
    public var spawnsProcess: Bool {
        switch self {
        case .run, .shell: return true
        case .sleep, .fail, .transform, .children: return false
        case let .all(actions), let .any(actions): return actions.contains(where: \.spawnsProcess)
        }
    }
}
