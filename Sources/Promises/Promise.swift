/// Used by `Promise(.pending)` to make an unresolved promise whose box the
/// library seals itself.
public enum PMKUnambiguousInitializer {
    case pending
}

/// A value, or an error, that will be there later.
///
/// Not `final` (unlike PromiseKit's), but not `open` either: code outside
/// this library cannot subclass it. The one subclass, `SealedPromise`, is a
/// promise born resolved that holds its result itself — one object where a
/// promise and its box would be two (see `SealedPromise`). Its members are
/// `final` or in extensions (which cannot be overridden), so no call is
/// dispatched through the class's table.
public class Promise<T>: Thenable, CatchMixin {
    /// The box that holds the result; nil for a `SealedPromise`, which
    /// holds it itself.
    @usableFromInline
    final let box: Box<Result<T>>?

    @inlinable
    init(box: Box<Result<T>>) {
        self.box = box
    }

    /// For `SealedPromise`.
    @inlinable
    init(holdingResult: Void) {
        box = nil
    }

    /// A promise fulfilled with `value`.
    @inlinable
    public static func value(_ value: T) -> Promise<T> {
        holding(.fulfilled(value))
    }

    /// A promise born resolved with `result`, holding it itself.
    @inlinable
    @inline(__always)
    static func holding(_ result: Result<T>) -> Promise<T> {
        SealedPromise<Result<T>>(result)
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
    public final class func pending(file: StaticString = #fileID, line: UInt = #line) -> (promise: Promise<T>, resolver: Resolver<T>) {
        let box = EmptyBox<Sealant<Result<T>>>(file: file, line: line)
        return (Promise(box: box), Resolver(box))
    }

    /// Calls `to` with the result when there is one: at once if there is.
    @inlinable
    @inline(never)
    public final func pipe(to: @escaping (Result<T>) -> Void) {
        if let box {
            box.pipe(to)
        } else {
            to(heldResult)
        }
    }

    /// The result, or nil while pending.
    @inlinable
    public final var result: Result<T>? {
        guard let box else { return heldResult }
        switch box.inspect() {
        case .pending: return nil
        case .resolved(let result): return result
        }
    }

    /// The result a `SealedPromise` holds; only where `box` is nil.
    @inlinable
    @inline(__always)
    final var heldResult: Result<T> {
        unsafeDowncast(self, to: SealedPromise<Result<T>>.self).value
    }

    /// The result if the promise was born resolved — a `SealedPromise`, or
    /// a promise of a `SealedBox` — read without a lock; else nil.
    @inlinable
    @inline(__always)
    final var resultAtBirth: Result<T>? {
        guard let box else { return heldResult }
        return box.isSealedBox ? box.asSealed.value : nil
    }
}

/// What a `SealedPromise` stores: a `Result`. A protocol only so that the
/// promise can be generic over the stored type, as `EmptyBox` is over its
/// state: a class with a stored `Result<T>` looks that type's metadata up in
/// the runtime's cache each time one is freed (deinitializers are never
/// specialised), whereas a stored `Stored` is destroyed with the metadata
/// the class carries as its own generic argument.
@usableFromInline
protocol ResultStorage {
    associatedtype Value
}

extension Result: ResultStorage {
    @usableFromInline
    typealias Value = T
}

/// A promise born resolved, holding its result itself: `Promise.value(_:)`
/// and `map(on: nil)` on a promise already resolved. One allocation, where
/// a `Promise` and a `SealedBox` are two: `map(on: nil)` on a resolved
/// promise went from ~690 instructions to ~400.
///
/// `Stored` is always `Result<Stored.Value>`; `Promise.heldResult` reads
/// it as that.
@usableFromInline
final class SealedPromise<Stored: ResultStorage>: Promise<Stored.Value>, @unchecked Sendable {
    // @unchecked Sendable, restated as the compiler asks: see `Promise`'s.
    @usableFromInline
    final let value: Stored

    @inlinable
    init(_ value: Stored) {
        self.value = value
        super.init(holdingResult: ())
    }
}

extension Promise: @unchecked Sendable where T: Sendable {
    // Safe: the only state is a `let` reference to a thread-safe box, or
    // (`SealedPromise`) a `let` result of a Sendable type.
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
        holding(.fulfilled(()))
    }
}
