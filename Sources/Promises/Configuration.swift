import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The library's settings: `conf`. Thread-safe; change them early, before
/// promises are in flight.
///
/// Unlike PromiseKit, the default queues are not `DispatchQueue.main`, which
/// nothing drains in a Linux server that never calls `dispatchMain()`
/// (PromiseKit issues #627, #979). Both `Q.map` and `Q.return` default to
/// `PMKConfiguration.defaultQueue`: one serial queue, so — as with
/// PromiseKit's main queue — handlers run one at a time, in the order their
/// promises resolved, and never race each other.
public final class PMKConfiguration: Sendable {
    /// The serial queue both `Q.map` and `Q.return` start as.
    public static let defaultQueue = DispatchQueue(label: "Promises.default")

    struct State {
        var queues: (map: DispatchQueue?, return: DispatchQueue?)
        var catchPolicy: CatchPolicy
        var logHandler: (@Sendable (LogEvent) -> Void)?
        var leakHandler: (@Sendable (LeakReport) -> Void)?
    }

    private let state: Mutex<State>

    init() {
        state = Mutex(State(
            queues: (map: PMKConfiguration.defaultQueue, return: PMKConfiguration.defaultQueue),
            catchPolicy: .allErrorsExceptCancellation,
            logHandler: nil,
            leakHandler: nil))
    }

    /// Where handlers run by default: `map` for then / map / compactMap /
    /// recover / tap / get's siblings that transform, `return` for done /
    /// get / catch / ensure / finally. `nil` runs handlers inline.
    public var Q: (map: DispatchQueue?, return: DispatchQueue?) {
        get { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.queues } }
        set { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.queues = newValue } }
    }

    /// The default policy of `catch` and the policy-taking `recover`s.
    public var catchPolicy: CatchPolicy {
        get { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.catchPolicy } }
        set { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.catchPolicy = newValue } }
    }

    /// Receives every `LogEvent`. The default writes one line to stderr.
    public var logHandler: @Sendable (LogEvent) -> Void {
        get { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.logHandler } ?? PMKConfiguration.writeToStandardError }
        set { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.logHandler = newValue } }
    }

    /// Receives each pending promise or guarantee that was deallocated, with
    /// where it was made. When unset, `logHandler` gets the plain event, as
    /// in PromiseKit (the default one prints the location too). A handler
    /// may `reject` an orphaned promise so its chain ends.
    public var leakHandler: (@Sendable (LeakReport) -> Void)? {
        get { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.leakHandler } }
        set { state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) { $0.leakHandler = newValue } }
    }

    @usableFromInline
    func report(_ leak: LeakReport) {
        let (leakHandler, logHandler) = state.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) {
            ($0.leakHandler, $0.logHandler)
        }
        if let leakHandler {
            leakHandler(leak)
            return
        }
        // The log handler gets PromiseKit's plain event; the default writer
        // finds the location in this thread's state, so it is printed even
        // after `conf.logHandler = conf.logHandler` (a save and restore).
        ThreadDrainState.reportingLeak(at: leak.location) {
            (logHandler ?? PMKConfiguration.writeToStandardError)(leak.event)
        }
    }

    @Sendable
    static func writeToStandardError(_ event: LogEvent) {
        switch event {
        case .pendingPromiseDeallocated, .pendingGuaranteeDeallocated:
            if let location = ThreadDrainState.leakBeingReported {
                writeLine("Promises: \(event) (made at \(location))")
                return
            }
        case .waitOnMainThread, .cauterized:
            break
        }
        writeLine("Promises: \(event)")
    }

    static func writeLine(_ text: String) {
        var line = text
        line.append("\n")
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// The library's configuration (PromiseKit's `conf`).
public let conf = PMKConfiguration()
