/// The type of the last parameter of the `Promise.pending()` and
/// `Guarantee.pending()` that record where they are called (see there).
public protocol _PMKCallSiteMarker {}

/// The default of that parameter, which callers never pass.
public struct _PMKCallSite: _PMKCallSiteMarker {
    @inlinable
    public init() {}
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
    public convenience init(
        file: StaticString = #fileID, line: UInt = #line, resolver body: (Resolver<T>) throws -> Void
    ) {
        self.init(resolving: EmptyBox(file: file, line: line), body)
    }

    /// PromiseKit's `init(resolver:)`, exactly: what `Promise<T>.init(resolver:)`
    /// names as a function, and what a protocol requiring it is met by. A
    /// call (`Promise { seal in … }`) takes the initializer above instead,
    /// which knows where it was called from; this one does not.
    @_disfavoredOverload
    @inlinable
    public convenience init(resolver body: (Resolver<T>) throws -> Void) {
        self.init(resolving: EmptyBox(), body)
    }

    @inlinable
    init(resolving box: EmptyBox<Sealant<Result<T>>>, _ body: (Resolver<T>) throws -> Void) {
        self.box = box
        held = InlineValue()
        let resolver = Resolver(box)
        do {
            try body(resolver)
        } catch {
            resolver.reject(error)
        }
    }

    /// A pending promise and its box, which the library's operators settle
    /// directly.
    @inlinable
    static func makePending() -> (Promise<T>, EmptyBox<Sealant<Result<T>>>) {
        let box = EmptyBox<Sealant<Result<T>>>()
        return (Promise(box: box), box)
    }

    /// A pending promise and the resolver that settles it. `file` and `line`
    /// say where it was made, for leak reports.
    ///
    /// `marker` is never passed: its type is inferred from its default, which
    /// only a call has. So a bare reference (`let make = Promise<Int>.pending`)
    /// cannot pick this method and gets PromiseKit's `pending()` below, which
    /// can be called as PromiseKit's can; calls prefer this method. (An empty
    /// parameter pack would do the same, but crashes the Swift 6.3.1
    /// optimiser in release builds of some callers.)
    @inlinable
    public class func pending<Marker: _PMKCallSiteMarker>(
        file: StaticString = #fileID, line: UInt = #line, _ marker: Marker = _PMKCallSite()
    ) -> (promise: Promise<T>, resolver: Resolver<T>) {
        let box = EmptyBox<Sealant<Result<T>>>(file: file, line: line)
        return (Promise(box: box), Resolver(box))
    }

    /// PromiseKit's `pending()`, exactly (see the method above). It does not
    /// know where it was called from.
    @_disfavoredOverload
    @inlinable
    public class func pending() -> (promise: Promise<T>, resolver: Resolver<T>) {
        let box = EmptyBox<Sealant<Result<T>>>()
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

extension Promise: @unchecked Sendable {
    // Safe for the promise's own state: `box` is a `let` reference to a box
    // whose state is guarded by its lock, and `held` a `let` written before
    // the promise is shared. Whatever the `T`: the value is handed to
    // handlers on the queues their callers chose, as in PromiseKit, which
    // asks no `Sendable` of it (`map(on: .global())` moves it to another
    // thread anyway), so a promise of a non-`Sendable` value may cross
    // threads too — the `extension Promise: @unchecked Sendable {}` that
    // PromiseKit clients add for Swift 6 says the same.
}

extension Promise: CustomStringConvertible, CustomDebugStringConvertible {
    /// `Promise(…Int)` while pending, then `Promise(value)` or `Promise(error)`.
    public var description: String {
        switch result {
        case nil: return "Promise(…\(T.self))"
        case .rejected(let error)?: return "Promise(\(error))"
        case .fulfilled(let value)?: return "Promise(\(value))"
        }
    }

    /// `Promise<Int>.pending(handlers: 2)`, `Promise<Int>.fulfilled(3)` or
    /// `Promise<Int>.rejected(ErrorType.case)`.
    public var debugDescription: String {
        let state: Sealant<Result<T>> = box?.inspect() ?? .resolved(heldResult)
        switch state {
        case .pending(let handlers):
            return "Promise<\(T.self)>.pending(handlers: \(handlers.count))"
        case .resolved(.rejected(let error)):
            return "Promise<\(T.self)>.rejected(\(type(of: error)).\(error))"
        case .resolved(.fulfilled(let value)):
            return "Promise<\(T.self)>.fulfilled(\(value))"
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
