import Foundation

/// Errors the library itself produces. The same cases as PromiseKit 8.
public enum PMKError: Error, @unchecked Sendable {
    // @unchecked Sendable: `compactMap` carries the offending value and type
    // for diagnostics only; the library never reads or mutates them.

    /// A completion handler was called with neither a value nor an error.
    case invalidCallingConvention
    /// A `then` or `recover` handler returned the very promise it feeds.
    case returnedSelf
    /// Input that cannot produce a result: `race` of nothing, a
    /// `when(fulfilled:concurrently:)` limit below 1.
    case badInput
    /// The operation was cancelled.
    case cancelled
    /// `compactMap` got `nil` from its transform of the value.
    case compactMap(Any, Any.Type)
    /// PromiseKit's name for `compactMap`, before Swift renamed `flatMap`.
    /// Nothing in the library produces it; it is here so that exhaustive
    /// `switch`es written for PromiseKit 8 keep compiling.
    @available(*, deprecated, message: "See: `compactMap`")
    case flatMap(Any, Any.Type)
    /// `firstValue` / `lastValue` of an empty sequence, or no element matched.
    case emptySequence
    /// `race(fulfilled:)`: every input rejected.
    case noWinner
}

extension PMKError: CustomDebugStringConvertible, LocalizedError {
    public var debugDescription: String {
        switch self {
        case .invalidCallingConvention:
            return "A closure was called with an invalid calling convention, probably (nil, nil)"
        case .returnedSelf:
            return "A promise handler returned itself"
        case .badInput:
            return "Bad input was provided to a PromiseKit function"
        case .cancelled:
            return "The asynchronous sequence was cancelled"
        case .compactMap(let value, let type):
            return "Could not `compactMap<\(type)>`: \(value)"
        case .emptySequence:
            return "The first or last element was requested for an empty sequence"
        case .noWinner:
            return "All thenables passed to race(fulfilled:) were rejected"
        default:
            // `.flatMap`, deprecated: reached through `DeprecatedCases`.
            guard let (value, type) = (self as any DeprecatedCases).flatMapPayload else { return "PMKError" }
            return "Could not `flatMap<\(type)>`: \(value)"
        }
    }

    public var errorDescription: String? { debugDescription }
}

/// Reaches `PMKError`'s deprecated case without a deprecation warning: a
/// requirement that is not deprecated, met by a member that is.
private protocol DeprecatedCases {
    var flatMapPayload: (Any, Any.Type)? { get }
}

extension PMKError: DeprecatedCases {
    @available(*, deprecated)
    fileprivate var flatMapPayload: (Any, Any.Type)? {
        guard case .flatMap(let value, let type) = self else { return nil }
        return (value, type)
    }
}

extension PMKError: CancellableError {
    public var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }
}

/// An error that knows whether it means "cancelled". `catch` skips cancelled
/// errors under the default `CatchPolicy`.
public protocol CancellableError: Error {
    var isCancelled: Bool { get }
}

extension Error {
    /// True for `PMKError.cancelled`, a `CancellableError` that says so,
    /// `CocoaError.userCancelled` and `URLError.cancelled`.
    public var isCancelled: Bool {
        if let cancellable = self as? any CancellableError {
            return cancellable.isCancelled
        }
        if let cocoa = self as? CocoaError {
            return cocoa.code == .userCancelled
        }
        if let url = self as? URLError {
            return url.code == .cancelled
        }
        return false
    }
}

/// Which errors `catch` and the policy-taking `recover`s handle.
public enum CatchPolicy: Sendable {
    /// Every error, cancellation included.
    case allErrors
    /// Every error except cancellation (`Error.isCancelled`): the default.
    case allErrorsExceptCancellation
}
