import Dispatch
import Locking
import Synchronization

/// The library's settings, as a value: PromiseKit's `PMKConfiguration`.
/// `conf` is the one the library uses.
///
/// Unlike PromiseKit, the default queues are not `DispatchQueue.main`, which
/// nothing drains in a Linux server that never calls `dispatchMain()`
/// (PromiseKit issues #627, #979). Both `Q.map` and `Q.return` default to
/// `PMKConfiguration.defaultQueue`: one serial queue, so — as with
/// PromiseKit's main queue — handlers run one at a time, in the order their
/// promises resolved, and never race each other.
public struct PMKConfiguration {
    /// The serial queue both `Q.map` and `Q.return` start as.
    public static let defaultQueue = DispatchQueue(label: "Promises.default")

    /// Where handlers run by default: `map` for then / map / compactMap /
    /// recover / tap, `return` for done / get / catch / ensure / finally.
    /// `nil` runs handlers inline.
    public var Q: (map: DispatchQueue?, return: DispatchQueue?) = (map: defaultQueue, return: defaultQueue)

    /// The default policy of `catch` and the policy-taking `recover`s.
    public var catchPolicy = CatchPolicy.allErrorsExceptCancellation

    /// Receives every `LogEvent`, on the thread where it happened. The
    /// default writes one line to stderr.
    public var logHandler: (LogEvent) -> Void = PMKConfiguration.writeToStandardError

    /// Receives each pending promise or guarantee that was deallocated, with
    /// where it was made, on the thread that let it go. When unset,
    /// `logHandler` gets the plain event, as in PromiseKit (the default one
    /// prints the location too). A handler may `reject` an orphaned promise
    /// so its chain ends.
    public var leakHandler: ((PMKLeakReport) -> Void)?

    init() {}
}

/// The configuration the library uses (PromiseKit's `conf`). Change it
/// early, before promises are in flight.
///
/// A value, as in PromiseKit: `let saved = conf` is a copy, `conf = saved`
/// puts it back, and changing a copy changes nothing else. Unlike
/// PromiseKit's, every read and every write of it is atomic, so promises
/// running on other threads (which read `conf.Q` for their default queues)
/// never see half a write. A change through a member (`conf.Q.map = q`) is
/// a read and then a write: two threads changing `conf` at once may lose one
/// of the changes.
public var conf: PMKConfiguration {
    get { ConfigurationStore.current }
    set { ConfigurationStore.current = newValue }
}

/// Where `conf` is kept: behind a lock, so that a write on one thread and
/// the reads of promises running on others never overlap. One object, whose
/// address names the lock to ThreadSanitizer: reaching it is one check that
/// the global is initialised.
final class ConfigurationStore: Sendable {
    static let shared = ConfigurationStore()

    // The value's handlers are not `Sendable`: they are called on whatever
    // thread an event happens on, as in PromiseKit, whose contract leaves
    // that to the client. The lock only guards the copy in and out.
    private let state = Mutex(UncheckedSendable(PMKConfiguration()))

    static var current: PMKConfiguration {
        get { shared.read() }
        set { shared.write(newValue) }
    }

    private func read() -> PMKConfiguration {
        state.withLock(announcing: address) { $0 }.value
    }

    private func write(_ configuration: PMKConfiguration) {
        let value = UncheckedSendable(configuration)
        state.withLock(announcing: address) { $0 = value }
    }

    private var address: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// Hands `leak` to `conf.leakHandler`, or its event to `conf.logHandler`.
    static func report(_ leak: PMKLeakReport) {
        let settings = current
        if let leakHandler = settings.leakHandler {
            leakHandler(leak)
            return
        }
        // The log handler gets PromiseKit's plain event; the default writer
        // finds the location in this thread's state, so it is printed even
        // after `conf.logHandler = conf.logHandler` (a save and restore).
        ThreadDrainState.reportingLeak(at: leak.location) {
            settings.logHandler(leak.event)
        }
    }
}
