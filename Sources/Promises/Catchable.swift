import Dispatch

/// `catch`, `recover`, `ensure` and friends, for thenables that can reject.
public protocol CatchMixin: Thenable {}

extension CatchMixin {
    /// Runs `body` if the chain rejected — for every error under
    /// `.allErrors`, all but cancellation under the default policy. Runs on
    /// `conf.Q.return` by default. Ends the chain: what follows is `finally`.
    @inlinable
    @inline(never)
    @discardableResult
    public func `catch`(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, policy: CatchPolicy = conf.catchPolicy,
        _ body: @escaping (any Error) -> Void
    ) -> PMKFinalizer {
        let finalizer = PMKFinalizer()
        pipe { result in
            switch result {
            case .rejected(let error) where policy == .allErrors || !error.isCancelled:
                func step() {
                    body(error)
                    finalizer.pending.resolve(())
                }
                if let on { on.dispatch(flags: flags, step) } else { step() }
            case .rejected, .fulfilled:
                finalizer.pending.resolve(())
            }
        }
        return finalizer
    }

    /// Lets `body` turn a rejection into the thenable it returns; a thrown
    /// error rejects. Errors the policy excludes pass through. Runs on
    /// `conf.Q.map` by default.
    @inlinable
    @inline(never)
    public func recover<U: Thenable>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, policy: CatchPolicy = conf.catchPolicy,
        _ body: @escaping (any Error) throws -> U
    ) -> Promise<T> where U.T == T {
        let (rp, rpbox) = Promise<T>.makePending()
        pipe { result in
            switch result {
            case .fulfilled:
                rpbox.settle(result)
            case .rejected(let error) where policy == .allErrors || !error.isCancelled:
                func step() {
                    do {
                        let rv = try body(error)
                        guard rv !== rp else { throw PMKError.returnedSelf }
                        rv.pipe { rpbox.settle($0) }
                    } catch {
                        rpbox.settle(.rejected(error))
                    }
                }
                if let on { on.dispatch(flags: flags, step) } else { step() }
            case .rejected:
                rpbox.settle(result)
            }
        }
        return rp
    }

    /// Turns any rejection, cancellation included, into the guarantee `body`
    /// returns: the chain cannot fail after this.
    @inlinable
    @inline(never)
    @discardableResult
    public func recover(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ body: @escaping (any Error) -> Guarantee<T>
    ) -> Guarantee<T> {
        let (rg, rgbox) = Guarantee<T>.makePending()
        pipe { result in
            switch result {
            case .fulfilled(let value):
                rgbox.settle(value)
            case .rejected(let error):
                func step() {
                    body(error).box.pipe { rgbox.settle($0) }
                }
                if let on { on.dispatch(flags: flags, step) } else { step() }
            }
        }
        return rg
    }

    /// Runs `body` whatever the outcome, then passes the outcome on. Runs on
    /// `conf.Q.return` by default.
    @inlinable
    @inline(never)
    public func ensure(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping () -> Void
    ) -> Promise<T> {
        let (rp, rpbox) = Promise<T>.makePending()
        pipe { result in
            func step() {
                body()
                rpbox.settle(result)
            }
            if let on { on.dispatch(flags: flags, step) } else { step() }
        }
        return rp
    }

    /// Like `ensure`, but the chain also waits for the guarantee `body`
    /// returns.
    @inlinable
    @inline(never)
    public func ensureThen(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping () -> Guarantee<Void>
    ) -> Promise<T> {
        let (rp, rpbox) = Promise<T>.makePending()
        pipe { result in
            func step() {
                body().box.pipe { _ in rpbox.settle(result) }
            }
            if let on { on.dispatch(flags: flags, step) } else { step() }
        }
        return rp
    }

    /// Ends a chain whose errors are deliberately ignored: each is logged as
    /// `LogEvent.cauterized`.
    @inlinable
    @inline(never)
    @discardableResult
    public func cauterize() -> PMKFinalizer {
        self.catch {
            conf.logHandler(.cauterized($0))
        }
    }
}

extension CatchMixin where T == Void {
    /// Handles every rejection of a `Void` chain, cancellation included; the
    /// chain cannot fail after this.
    @inlinable
    @inline(never)
    @discardableResult
    public func recover(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ body: @escaping (any Error) -> Void
    ) -> Guarantee<Void> {
        let (rg, rgbox) = Guarantee<Void>.makePending()
        pipe { result in
            switch result {
            case .fulfilled:
                rgbox.settle(())
            case .rejected(let error):
                func step() {
                    body(error)
                    rgbox.settle(())
                }
                if let on { on.dispatch(flags: flags, step) } else { step() }
            }
        }
        return rg
    }

    /// Handles the rejections the policy selects; a thrown error rejects.
    @inlinable
    @inline(never)
    public func recover(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, policy: CatchPolicy = conf.catchPolicy,
        _ body: @escaping (any Error) throws -> Void
    ) -> Promise<Void> {
        let (rp, rpbox) = Promise<Void>.makePending()
        pipe { result in
            switch result {
            case .fulfilled:
                rpbox.settle(.fulfilled(()))
            case .rejected(let error) where policy == .allErrors || !error.isCancelled:
                func step() {
                    do {
                        try body(error)
                        rpbox.settle(.fulfilled(()))
                    } catch {
                        rpbox.settle(.rejected(error))
                    }
                }
                if let on { on.dispatch(flags: flags, step) } else { step() }
            case .rejected:
                rpbox.settle(result)
            }
        }
        return rp
    }
}

/// What `catch` returns: the chain has ended, and `finally` runs after.
public final class PMKFinalizer {
    @usableFromInline
    let pending: (guarantee: Guarantee<Void>, resolve: @Sendable (()) -> Void)

    @inlinable
    init() {
        let (guarantee, box) = Guarantee<Void>.makePending()
        pending = (guarantee, Guarantee.resolveFunction(box))
    }

    /// Runs `body` once the chain and its `catch` are done. Runs on
    /// `conf.Q.return` by default.
    @inlinable
    @inline(never)
    public func finally(
        on: DispatchQueue? = conf.Q.return, flags: DispatchWorkItemFlags? = nil, _ body: @escaping () -> Void
    ) {
        pending.guarantee.done(on: on, flags: flags) { body() }
    }
}
