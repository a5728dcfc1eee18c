/// What the library reports through `conf.logHandler`. The same four cases
/// as PromiseKit 8, so exhaustive `switch`es over them keep compiling.
public enum LogEvent: Sendable {
    /// `wait()` was called on the main thread.
    case waitOnMainThread
    /// A `Resolver` went away while its promise was pending: the promise can
    /// never resolve. `conf.leakHandler` also gets where it was made.
    case pendingPromiseDeallocated
    /// A guarantee from `Guarantee(resolver:)` or `Guarantee.pending()` went
    /// away while pending. `conf.leakHandler` also gets where it was made.
    case pendingGuaranteeDeallocated
    /// `cauterize()` swallowed this error.
    case cauterized(any Error)
}

// No `CustomStringConvertible`: as in PromiseKit, `"\(event)"` is the case
// (`pendingPromiseDeallocated`, `cauterized(…)`), so code that logs or
// compares interpolated events behaves the same against either library.
extension LogEvent {
    /// The event as a sentence, as the default `logHandler` writes it
    /// (`warning: pending promise deallocated`).
    public var message: String {
        switch self {
        case .waitOnMainThread:
            return "warning: `wait()` called on main thread!"
        case .pendingPromiseDeallocated:
            return "warning: pending promise deallocated"
        case .pendingGuaranteeDeallocated:
            return "warning: pending guarantee deallocated"
        case .cauterized(let error):
            return "cauterized-error: \(error)"
        }
    }
}

/// A pending promise or guarantee that can never resolve: the only way to
/// resolve it went away. Given to `conf.leakHandler`.
public struct PMKLeakReport: Sendable, CustomStringConvertible {
    /// `.pendingPromiseDeallocated` or `.pendingGuaranteeDeallocated`.
    public let event: LogEvent
    /// Where the promise or guarantee was made (`pending()`,
    /// `Promise { seal in … }`, `Guarantee { resolve in … }`).
    public let location: PMKSourceLocation

    @usableFromInline
    let rejecter: (@Sendable (any Error) -> Void)?

    @usableFromInline
    init(event: LogEvent, location: PMKSourceLocation, rejecter: (@Sendable (any Error) -> Void)?) {
        self.event = event
        self.location = location
        self.rejecter = rejecter
    }

    /// True for a promise, which `reject(_:)` can still settle; false for a
    /// guarantee, which cannot fail.
    public var canReject: Bool { rejecter != nil }

    /// Rejects the orphaned promise with `error`, so whatever waits on it
    /// goes on instead of hanging forever. Does nothing for a guarantee.
    public func reject(_ error: any Error) {
        rejecter?(error)
    }

    public var description: String {
        "\(event.message) (made at \(location))"
    }
}

/// The error a leak handler may reject an orphaned promise with: says where
/// the promise was made.
public struct PendingPromiseDeallocated: Error, CustomStringConvertible {
    public let location: PMKSourceLocation

    public init(location: PMKSourceLocation) {
        self.location = location
    }

    public var description: String {
        "the promise made at \(location) was deallocated while pending: whatever should have resolved it dropped its resolver"
    }
}
