/// Used by `Promise(.pending)` to make an unresolved promise whose box the
/// library seals itself.
public enum PMKUnambiguousInitializer {
    case pending
}

/// A value, or an error, that will be there later.
public final class Promise<T>: Thenable, CatchMixin {
    @usableFromInline
    let box: Box<Result<T>>

    @inlinable
    init(box: Box<Result<T>>) {
        self.box = box
    }

    /// A promise fulfilled with `value`.
    @inlinable
    public static func value(_ value: T) -> Promise<T> {
        Promise(box: SealedBox(value: .fulfilled(value)))
    }

    /// A promise rejected with `error`.
    @inlinable
    public init(error: any Error) {
        box = SealedBox(value: .rejected(error))
    }

    /// A promise that resolves as `bridge` does.
    @inlinable
    public init<U: Thenable>(_ bridge: U) where U.T == T {
        let box = EmptyBox<Sealant<Result<T>>>()
        self.box = box
        bridge.pipe { box.settle($0) }
    }

    /// A promise that `body` resolves through the `Resolver` it gets. A body
    /// that throws rejects the promise. `file` and `line` say where the
    /// promise was made, for leak reports.
    @inlinable
    public init(file: StaticString = #fileID, line: UInt = #line, resolver body: (Resolver<T>) throws -> Void) {
        let box = EmptyBox<Sealant<Result<T>>>(file: file, line: line)
        self.box = box
        let resolver = Resolver(box)
        do {
            try body(resolver)
        } catch {
            resolver.reject(error)
        }
    }

    /// An unresolved promise the library seals itself.
    @inlinable
    public init(_: PMKUnambiguousInitializer) {
        box = EmptyBox<Sealant<Result<T>>>()
    }

    /// A pending promise and its box, which the library's operators settle
    /// directly.
    @inlinable
    static func makePending() -> (Promise<T>, EmptyBox<Sealant<Result<T>>>) {
        let box = EmptyBox<Sealant<Result<T>>>()
        return (Promise(box: box), box)
    }

    /// A pending promise and the resolver that settles it.
    @inlinable
    public class func pending(file: StaticString = #fileID, line: UInt = #line) -> (promise: Promise<T>, resolver: Resolver<T>) {
        let box = EmptyBox<Sealant<Result<T>>>(file: file, line: line)
        return (Promise(box: box), Resolver(box))
    }

    /// Calls `to` with the result when there is one: at once if there is.
    @inlinable
    @inline(never)
    public func pipe(to: @escaping (Result<T>) -> Void) {
        box.pipe(to)
    }

    /// The result, or nil while pending.
    @inlinable
    public var result: Result<T>? {
        switch box.inspect() {
        case .pending: return nil
        case .resolved(let result): return result
        }
    }
}

extension Promise: @unchecked Sendable where T: Sendable {
    // Safe: the only state is a `let` reference to a thread-safe box.
}

extension Promise: CustomStringConvertible {
    public var description: String {
        switch result {
        case nil: return "Promise(…\(T.self))"
        case .rejected(let error)?: return "Promise(\(error))"
        case .fulfilled(let value)?: return "Promise(\(value))"
        }
    }
}

extension Promise where T == Void {
    /// A fulfilled `Promise<Void>`.
    @inlinable
    public convenience init() {
        self.init(box: SealedBox(value: .fulfilled(())))
    }

    /// A fulfilled `Promise<Void>`.
    @inlinable
    public static var value: Promise<Void> {
        Promise(box: SealedBox(value: .fulfilled(())))
    }
}
