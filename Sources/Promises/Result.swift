/// The outcome of a promise: a value or an error.
///
/// PromiseKit's own `Result`, kept for compatibility: inside a module that
/// imports `Promises`, write `Swift.Result` for the standard library's.
public enum Result<T> {
    case fulfilled(T)
    case rejected(any Error)
}

extension Result: Sendable where T: Sendable {}

extension Result {
    /// True if this is `.fulfilled`.
    public var isFulfilled: Bool {
        if case .fulfilled = self { return true }
        return false
    }

    /// Bridges to the standard library's `Result`.
    public var asSwiftResult: Swift.Result<T, any Error> {
        switch self {
        case .fulfilled(let value): return .success(value)
        case .rejected(let error): return .failure(error)
        }
    }

    /// Bridges from the standard library's `Result`.
    public init<E: Error>(_ result: Swift.Result<T, E>) {
        switch result {
        case .success(let value): self = .fulfilled(value)
        case .failure(let error): self = .rejected(error)
        }
    }
}
