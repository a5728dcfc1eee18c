/// Used by `Promise(.pending)` to make an unresolved promise whose box the
/// library seals itself.
public enum PMKUnambiguousInitializer {
    case pending
}

/// A value, or an error, that will be there later.
///
/// A promise born fulfilled with a small value (`Promise.value(_:)`,
/// `map(on: nil)` on a resolved promise) holds the value itself, in
/// `held`, and has no box: one object where a promise and a `SealedBox`
/// would be two.
public final class Promise<T>: Thenable, CatchMixin {
    /// The box that holds the result; nil when the promise holds its
    /// value itself, in `held`.
    @usableFromInline
    let box: Box<Result<T>>?

    /// The value, when `box` is nil; empty otherwise. See `InlineValue`.
    @usableFromInline
    let held: InlineValue

    @inlinable
    init(box: Box<Result<T>>) {
        self.box = box
        held = InlineValue()
    }

    /// A promise holding `value` itself; `T` must fit in an `InlineValue`.
    @inlinable
    init(holding value: T) {
        box = nil
        held = InlineValue(value)
    }

    deinit {
        if box == nil {
            held.destroy(as: T.self)
        }
    }

    /// A promise fulfilled with `value`.
    @inlinable
    public static func value(_ value: T) -> Promise<T> {
        holding(.fulfilled(value))
    }

    /// A promise born resolved with `result`: holding a value that fits
    /// itself, else in a `SealedBox`.
    @inlinable
    @inline(__always)
    static func holding(_ result: Result<T>) -> Promise<T> {
        if InlineValue.fits(T.self), case .fulfilled(let value) = result {
            return Promise(holding: value)
        }
        return Promise(box: SealedBox(value: result))
    }

    /// A promise rejected with `error`.
    @inlinable
    public init(error: any Error) {
        box = SealedBox(value: .rejected(error))
        held = InlineValue()
    }

    /// A promise that resolves as `bridge` does.
    @inlinable
    public init<U: Thenable>(_ bridge: U) where U.T == T {
        let box = EmptyBox<Sealant<Result<T>>>()
        self.box = box
        held = InlineValue()
        bridge.pipe { box.settle($0) }
    }

    /// A promise that `body` resolves through the `Resolver` it gets. A body
    /// that throws rejects the promise. `file` and `line` say where the
    /// promise was made, for leak reports.
    @inlinable
    public init(file: StaticString = #fileID, line: UInt = #line, resolver body: (Resolver<T>) throws -> Void) {
        let box = EmptyBox<Sealant<Result<T>>>(file: file, line: line)
        self.box = box
        held = InlineValue()
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
        held = InlineValue()
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
        if let box {
            box.pipe(to)
        } else {
            to(heldResult)
        }
    }

    /// The result, or nil while pending.
    @inlinable
    public var result: Result<T>? {
        guard let box else { return heldResult }
        switch box.inspect() {
        case .pending: return nil
        case .resolved(let result): return result
        }
    }

    /// The value the promise holds itself; only where `box` is nil.
    @inlinable
    @inline(__always)
    var heldResult: Result<T> {
        .fulfilled(held.load(as: T.self))
    }

    /// The result if the promise was born resolved — holding its value, or
    /// of a `SealedBox` — read without a lock; else nil.
    @inlinable
    @inline(__always)
    var resultAtBirth: Result<T>? {
        guard let box else { return heldResult }
        return box.isSealedBox ? box.asSealed.value : nil
    }
}

extension Promise: @unchecked Sendable where T: Sendable {
    // Safe: the state is a `let` reference to a thread-safe box, or a
    // `let` value of a Sendable type.
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
        self.init(holding: ())
    }

    /// A fulfilled `Promise<Void>`.
    @inlinable
    public static var value: Promise<Void> {
        holding(.fulfilled(()))
    }
}
