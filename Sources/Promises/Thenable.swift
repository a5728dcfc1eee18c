import Dispatch

// Why the public operators of this library are `@inlinable @inline(never)`:
// `@inlinable` lets client code make a copy specialised for its types (no
// generic dispatch, no runtime metadata lookups); `@inline(never)` keeps
// each copy a function of its own instead of splicing it into the caller.
// Spliced together — `firstly { }.then { }.done { }.catch { }` in one
// function, or `then` in a loop — these bodies crash the Swift 6.3.1
// optimiser (SimplifyCFG::simplifySwitchEnumBlock, signal 11) in release
// builds of the caller. The test targets are built in release by CI to
// catch a regression.

/// Anything that resolves later with a `Result`: `Promise` and `Guarantee`.
public protocol Thenable: AnyObject {
    /// The type of the value.
    associatedtype T

    /// Calls `to` with the result once there is one — at once if there is.
    func pipe(to: @escaping (Result<T>) -> Void)

    /// The result, or nil while pending.
    var result: Result<T>? { get }
}

extension Thenable {
    /// Runs `body` with the value, and resolves as the thenable it returns
    /// does. Runs on `conf.Q.map` by default; `on: nil` runs inline.
    ///
    /// `then` and `done` make their promise here, in the caller's code, and
    /// the rest out of line: a caller that drops the promise
    /// (`_ = p.done { … }`) lets the optimiser drop its allocation too, and
    /// the body is handed over, not copied (a retain and a release less).
    /// (`map` hands its body over the same way but makes its promise out of
    /// line: see `mapPromise`.)
    /// There is no switch in these bodies to splice (see the note at the top
    /// of this file).
    @inlinable
    @inline(__always)
    public func then<U: Thenable>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) throws -> U
    ) -> Promise<U.T> {
        Promise(box: thenBox(on: on, flags: flags, body))
    }

    /// The box of the promise `then` returns.
    @inlinable
    @inline(never)
    func thenBox<U: Thenable>(
        on: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: consuming @escaping (T) throws -> U
    ) -> Box<Result<U.T>> {
        chainBox(ThenStep(queue: on, flags: flags, body: body))
    }

    /// A promise of `transform`'s result (a thrown error rejects it).
    @inlinable
    @inline(__always)
    public func map<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T) throws -> U
    ) -> Promise<U> {
        mapPromise(on: on, flags: flags, transform)
    }

    /// The promise `map` returns. Unlike `then` and `done`, `map` makes its
    /// promise out of line: on a resolved promise, inline, the promise is
    /// born resolved as one object holding its value (see `InlineValue`),
    /// not a promise around a box.
    @inlinable
    @inline(never)
    func mapPromise<U>(
        on: DispatchQueue?, flags: DispatchWorkItemFlags?, _ transform: consuming @escaping (T) throws -> U
    ) -> Promise<U> {
        if on == nil, let result = sealedResult {
            // Already resolved, inline: the returned promise is born sealed.
            switch result {
            case .fulfilled(let value):
                do {
                    return Promise.holding(.fulfilled(try transform(value)))
                } catch {
                    return Promise.holding(.rejected(error))
                }
            case .rejected(let error):
                return Promise.holding(.rejected(error))
            }
        }
        return Promise(box: chainBox(MapStep(queue: on, flags: flags, transform: transform)))
    }

    /// Like `map`, but `nil` rejects with `PMKError.compactMap`.
    @inlinable
    @inline(never)
    public func compactMap<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T) throws -> U?
    ) -> Promise<U> {
        map(on: on, flags: flags) { value in
            guard let rv = try transform(value) else {
                throw PMKError.compactMap(value, U.self)
            }
            return rv
        }
    }

    /// Runs `body` with the value at the end of a chain. Runs on
    /// `conf.Q.return` by default. (Made in two parts: see `then`.)
    @inlinable
    @inline(__always)
    public func done(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) throws -> Void
    ) -> Promise<Void> {
        Promise(box: doneBox(on: on, flags: flags, body))
    }

    /// The box of the promise `done` returns.
    @inlinable
    @inline(never)
    func doneBox(
        on: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: consuming @escaping (T) throws -> Void
    ) -> Box<Result<Void>> {
        if on == nil, let result = sealedResult {
            // Already resolved, inline: see `map`.
            switch result {
            case .fulfilled(let value):
                do {
                    try body(value)
                    return SealedBox(value: .fulfilled(()))
                } catch {
                    return SealedBox(value: .rejected(error))
                }
            case .rejected(let error):
                return SealedBox(value: .rejected(error))
            }
        }
        return chainBox(DoneStep(queue: on, flags: flags, body: body))
    }

    /// Runs `body` with the value and passes the value on; a thrown error
    /// rejects. Runs on `conf.Q.return` by default.
    @inlinable
    @inline(never)
    public func get(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (T) throws -> Void
    ) -> Promise<T> {
        map(on: on, flags: flags) {
            try body($0)
            return $0
        }
    }

    /// Shows `body` the result, fulfilled or rejected, and passes it on
    /// unchanged. Runs on `conf.Q.map` by default.
    @inlinable
    @inline(never)
    public func tap(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (Result<T>) -> Void
    ) -> Promise<T> {
        let (rp, rpbox) = Promise<T>.makePending()
        pipe { result in
            func step() {
                body(result)
                rpbox.settle(result)
            }
            if let on { on.dispatch(flags: flags, step) } else { step() }
        }
        return rp
    }

    /// The same outcome without the value.
    @inlinable
    @inline(never)
    public func asVoid() -> Promise<Void> {
        map(on: nil) { _ in }
    }
}

extension Thenable {
    /// The result if it is known without taking a lock — a promise or
    /// guarantee born resolved — else the locked `result` of other kinds of
    /// thenable, and nil for a pending box (whose handlers run at once if it
    /// turns out to be resolved).
    @inlinable
    @inline(__always)
    var sealedResult: Result<T>? {
        // A promise's own value, or a `SealedBox`'s, is read
        // straight, without building a `Sealant` (see `Box.isSealedBox`).
        if let promise = self as? Promise<T> {
            return promise.resultAtBirth
        }
        if let guarantee = self as? Guarantee<T> {
            let box = guarantee.box
            return box.isSealedBox ? .fulfilled(box.asSealed.value) : nil
        }
        return result
    }

    /// The error, if rejected.
    @inlinable
    public var error: (any Error)? {
        if case .rejected(let error)? = result { return error }
        return nil
    }

    /// True until resolved.
    @inlinable
    public var isPending: Bool {
        result == nil
    }

    /// True once fulfilled or rejected.
    @inlinable
    public var isResolved: Bool {
        !isPending
    }

    /// True if fulfilled.
    @inlinable
    public var isFulfilled: Bool {
        value != nil
    }

    /// True if rejected.
    @inlinable
    public var isRejected: Bool {
        error != nil
    }

    /// The value, if fulfilled.
    @inlinable
    public var value: T? {
        if case .fulfilled(let value)? = result { return value }
        return nil
    }
}
