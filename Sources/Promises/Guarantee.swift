import Dispatch

/// A promise that cannot fail.
public final class Guarantee<T>: Thenable {
    @usableFromInline
    let box: Box<T>

    @inlinable
    init(box: Box<T>) {
        self.box = box
    }

    /// A guarantee resolved with `value`.
    @inlinable
    public static func value(_ value: T) -> Guarantee<T> {
        Guarantee(box: SealedBox(value: value))
    }

    /// A guarantee that `body` resolves by calling the function it gets
    /// (which may be called from any thread; later calls do nothing).
    /// `file` and `line` say where it was made, for leak reports.
    @inlinable
    public convenience init(
        file: StaticString = #fileID, line: UInt = #line, resolver body: (@escaping @Sendable (T) -> Void) -> Void
    ) {
        self.init(resolving: EmptyBox(file: file, line: line, reportsLeak: true), body)
    }

    /// PromiseKit's `init(resolver:)`, exactly: what
    /// `Guarantee<T>.init(resolver:)` names as a function, and what a
    /// protocol requiring it is met by. A call (`Guarantee { seal in … }`)
    /// takes the initializer above instead, which knows where it was called
    /// from and hands `body` a `@Sendable` function.
    @_disfavoredOverload
    @inlinable
    public convenience init(resolver body: (@escaping (T) -> Void) -> Void) {
        self.init(resolving: EmptyBox(reportsLeak: true), body)
    }

    @inlinable
    init(resolving box: EmptyBox<Sealant<T>>, _ body: (@escaping @Sendable (T) -> Void) -> Void) {
        self.box = box
        body(Guarantee.resolveFunction(box))
    }

    /// The function that resolves `box`: thread-safe, so `@Sendable`.
    @inlinable
    static func resolveFunction(_ box: EmptyBox<Sealant<T>>) -> @Sendable (T) -> Void {
        let transfer = UncheckedSendable(box)
        return { transfer.value.settle($0) }
    }

    /// A pending guarantee and its box, which the library's operators settle
    /// directly.
    @inlinable
    static func makePending() -> (Guarantee<T>, EmptyBox<Sealant<T>>) {
        let box = EmptyBox<Sealant<T>>()
        return (Guarantee(box: box), box)
    }

    /// A pending guarantee and the function that resolves it (from any
    /// thread; later calls do nothing). `file` and `line` say where it was
    /// made, for leak reports. For `marker`, see `Promise.pending()`.
    @inlinable
    public class func pending<Marker: _PMKCallSiteMarker>(
        file: StaticString = #fileID, line: UInt = #line, _ marker: Marker = _PMKCallSite()
    ) -> (guarantee: Guarantee<T>, resolve: @Sendable (T) -> Void) {
        let box = EmptyBox<Sealant<T>>(file: file, line: line, reportsLeak: true)
        return (Guarantee(box: box), resolveFunction(box))
    }

    /// PromiseKit's `pending()`, exactly (see `Promise.pending()`). It does
    /// not know where it was called from.
    @_disfavoredOverload
    @inlinable
    public class func pending() -> (guarantee: Guarantee<T>, resolve: (T) -> Void) {
        let box = EmptyBox<Sealant<T>>(reportsLeak: true)
        return (Guarantee(box: box), resolveFunction(box))
    }

    /// - See: `Thenable.pipe(to:)`
    @inlinable
    @inline(never)
    public func pipe(to: @escaping (Result<T>) -> Void) {
        box.pipe { to(.fulfilled($0)) }
    }

    /// - See: `Thenable.result`
    @inlinable
    public var result: Result<T>? {
        switch box.inspect() {
        case .pending: return nil
        case .resolved(let value): return .fulfilled(value)
        }
    }

    /// Blocks the calling thread until the guarantee resolves. Never call it
    /// on the queue the guarantee's resolution needs: that deadlocks. Inline
    /// handlers this thread postponed (see `Trampoline`) run first.
    public func wait() -> T {
        warnIfMainThread()
        if case .resolved(let value) = box.inspect() {
            return value
        }
        let slot = WaitSlot<T>()
        box.pipe { slot.put($0) }
        Trampoline.runPostponed()
        return slot.take()
    }

    /// Suspends until the guarantee resolves.
    public func async() async -> T {
        if case .resolved(let value) = box.inspect() {
            return value
        }
        let transfer = await withUnsafeContinuation { (continuation: UnsafeContinuation<UncheckedSendable<T>, Never>) in
            box.pipe { continuation.resume(returning: UncheckedSendable($0)) }
        }
        return transfer.value
    }
}

extension Guarantee: @unchecked Sendable {
    // Safe for the guarantee's own state: a `let` reference to a box whose
    // state is guarded by its lock. Whatever the `T`: see `Promise`.
}

extension Guarantee {
    /// Runs `body` with the value on `on` (default `conf.Q.return`).
    @inlinable
    @inline(never)
    @discardableResult
    public func done(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) -> Void
    ) -> Guarantee<Void> {
        let (rg, rgbox) = Guarantee<Void>.makePending()
        box.pipe { value in
            func step() {
                body(value)
                rgbox.settle(())
            }
            if let on { on.dispatch(flags: flags, step) } else { step() }
        }
        return rg
    }

    /// Runs `body` with the value, then passes the value on.
    @inlinable
    @inline(never)
    public func get(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) -> Void
    ) -> Guarantee<T> {
        map(on: on, flags: flags) {
            body($0)
            return $0
        }
    }

    /// A guarantee of `body`'s result (run on `conf.Q.map` by default).
    @inlinable
    @inline(never)
    public func map<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) -> U
    ) -> Guarantee<U> {
        let (rg, rgbox) = Guarantee<U>.makePending()
        box.pipe { value in
            func step() {
                rgbox.settle(body(value))
            }
            if let on { on.dispatch(flags: flags, step) } else { step() }
        }
        return rg
    }

    /// A guarantee that resolves as the guarantee `body` returns does.
    @inlinable
    @inline(never)
    @discardableResult
    public func then<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) -> Guarantee<U>
    ) -> Guarantee<U> {
        let (rg, rgbox) = Guarantee<U>.makePending()
        box.pipe { value in
            func step() {
                body(value).box.pipe { rgbox.settle($0) }
            }
            if let on { on.dispatch(flags: flags, step) } else { step() }
        }
        return rg
    }

    /// The same guarantee without its value.
    @inlinable
    @inline(never)
    public func asVoid() -> Guarantee<Void> {
        map(on: nil) { _ in }
    }
}

extension Guarantee where T == Void {
    /// A resolved `Guarantee<Void>`.
    @inlinable
    public convenience init() {
        self.init(box: SealedBox(value: ()))
    }

    /// A resolved `Guarantee<Void>`.
    @inlinable
    public static var value: Guarantee<Void> {
        Guarantee(box: SealedBox(value: ()))
    }
}
