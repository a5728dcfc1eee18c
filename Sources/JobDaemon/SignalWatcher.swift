import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The signals jobd handles — SIGHUP (reload), SIGTERM and SIGINT (stop).
/// `SignalService` receives them through libdispatch's signal sources once
/// the service runs; `catchEarly()`, first thing in `main`, keeps one that
/// arrives before then from ending jobd.
///
/// (The main thread of a Swift program with an async `main` waits in
/// libdispatch's `sigsuspend` with every signal unblocked, so blocking them
/// is not enough: a SIGTERM in the first milliseconds would take its
/// default action. Children get default dispositions and an empty mask: the
/// process runner resets both at spawn.)
public enum SignalWatcher {
    public static let handled: [Int32] = [SIGHUP, SIGTERM, SIGINT]

    /// Installs a handler that only notes each handled signal, until
    /// libdispatch installs its own; and ignores SIGPIPE (a client that
    /// hangs up early must not end jobd).
    public static func catchEarly() {
        for signal in handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                // Lock-free: safe in a signal handler.
                SignalWatcher.early.bitwiseOr(UInt32(1) << UInt32(signal), ordering: .relaxed)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        signal(SIGPIPE, SIG_IGN)
    }

    /// The signals noted before `SignalService` listened, in handling order
    /// (a stop wins over a reload); clears them.
    static func takeEarly() -> [Int32] {
        let bits = early.exchange(0, ordering: .relaxed)
        return [SIGTERM, SIGINT, SIGHUP].filter { bits & (UInt32(1) << UInt32($0)) != 0 }
    }

    private static let early = Atomic<UInt32>(0)

    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGHUP: return "SIGHUP"
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        default: return "signal \(signal)"
        }
    }
}
