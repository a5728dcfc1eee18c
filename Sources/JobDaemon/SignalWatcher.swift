import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The signals jobd handles — SIGHUP (reload), SIGTERM and SIGINT (drain) —
/// taken with `sigwait` on a thread of their own, so a handler may do
/// anything (log, take locks), which a classic signal handler may not.
///
/// `blockHandledSignals()` must run first thing in `main`, before any
/// other thread exists: threads inherit the mask, so every thread then
/// leaves these signals to the watcher. (Children get a clean mask: the
/// process runner resets it at spawn.)
public enum SignalWatcher {
    public static let handled: [Int32] = [SIGHUP, SIGTERM, SIGINT]

    public static func blockHandledSignals() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        // A client that hangs up early must not kill jobd with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts the thread that calls `handler` with each signal, in order.
    public static func start(_ handler: @escaping @Sendable (Int32) -> Void) {
        let thread = Thread {
            var set = signalSet()
            while true {
                var signal: Int32 = 0
                if sigwait(&set, &signal) == 0 { handler(signal) }
            }
        }
        thread.name = "jobd-signals"
        thread.start()
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handled { sigaddset(&set, signal) }
        return set
    }

    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGHUP: return "SIGHUP"
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        default: return "signal \(signal)"
        }
    }
}
