import CProcessSupport

/// How a child's main process ended.
public enum ProcessTermination: Sendable, Hashable, CustomStringConvertible {
    /// It called exit (or returned from main) with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)
    /// Its status could not be read (something else in this process reaped
    /// it, e.g. SIGCHLD set to SIG_IGN).
    case unknown

    public var description: String {
        switch self {
        case let .exited(status): return "exited with status \(status)"
        case let .signaled(signal): return "was killed by signal \(ProcessTermination.signalName(signal))"
        case .unknown: return "ended with an unknown status"
        }
    }

    /// `SIGKILL (9)`, or `signal 70` for one without a name.
    public static func signalName(_ signal: Int32) -> String {
        if let abbreviation = jobd_signal_abbrev(signal) {
            return "SIG\(String(cString: abbreviation)) (\(signal))"
        }
        return "signal \(signal)"
    }
}
