import JobConfig
import JobProcesses

extension ProcessSpec.Command {
    /// The command of a `run` or `shell` action; nil for actions that start
    /// no process.
    public init?(_ action: Action) {
        switch action {
        case let .run(argv): self = .argv(argv)
        case let .shell(script): self = .shell(script)
        case .sleep, .fail, .transform, .all, .any, .children: return nil
        }
    }
}
