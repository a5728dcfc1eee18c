/// Resolves the promise it came with. When the last reference to a resolver
/// goes away while its promise is pending, the promise can never resolve:
/// `conf` reports it, with where the promise was made (see `conf.leakHandler`).
public final class Resolver<T> {
    @usableFromInline
    let box: EmptyBox<Sealant<Result<T>>>

    @inlinable
    init(_ box: EmptyBox<Sealant<Result<T>>>) {
        self.box = box
    }

    deinit {
        // Read through an unretained reference: `box` is held by `self`
        // throughout, and a plain `box.isPending` here retains and releases
        // the box around the (unspecialised) call — two atomic operations
        // on every resolver's way out.
        if Unmanaged.passUnretained(box)._withUnsafeGuaranteedRef({ $0.isPending }) {
            let orphan = UncheckedSendable(box)
            ConfigurationStore.report(
                PMKLeakReport(
                    event: .pendingPromiseDeallocated,
                    location: box.location,
                    rejecter: { orphan.value.seal(.rejected($0)) }))
        }
    }

    /// Where the promise was made (`pending()`, `Promise { seal in … }`).
    public var location: PMKSourceLocation {
        box.location
    }
}

extension Resolver: @unchecked Sendable {
    // Safe for the resolver's own state: a `let` reference to a box whose
    // state is guarded by its lock. Whatever the `T`: see `Promise`.
}

extension Resolver {
    /// Fulfills the promise with `value`.
    @inlinable
    @inline(never)
    public func fulfill(_ value: T) {
        box.settle(.fulfilled(value))
    }

    /// Rejects the promise with `error`.
    @inlinable
    @inline(never)
    public func reject(_ error: any Error) {
        box.settle(.rejected(error))
    }

    /// Resolves the promise with `result`.
    @inlinable
    @inline(never)
    public func resolve(_ result: Result<T>) {
        box.settle(result)
    }

    /// Resolves with the value or error; both `nil` rejects with
    /// `PMKError.invalidCallingConvention`.
    @inlinable
    @inline(never)
    public func resolve(_ obj: T?, _ error: (any Error)?) {
        if let error {
            reject(error)
        } else if let obj {
            fulfill(obj)
        } else {
            reject(PMKError.invalidCallingConvention)
        }
    }

    /// Fulfills with `obj` unless `error` is non-nil.
    @inlinable
    @inline(never)
    public func resolve(_ obj: T, _ error: (any Error)?) {
        if let error {
            reject(error)
        } else {
            fulfill(obj)
        }
    }

    /// For completion handlers that put the error first.
    @inlinable
    @inline(never)
    public func resolve(_ error: (any Error)?, _ obj: T?) {
        resolve(obj, error)
    }

    /// Resolves with a standard library `Result`.
    @inlinable
    @inline(never)
    public func resolve<E: Error>(_ result: Swift.Result<T, E>) {
        switch result {
        case .success(let value): fulfill(value)
        case .failure(let error): reject(error)
        }
    }
}

extension Resolver where T == Void {
    /// Fulfills unless `error` is non-nil.
    @inlinable
    @inline(never)
    public func resolve(_ error: (any Error)?) {
        if let error {
            reject(error)
        } else {
            fulfill(())
        }
    }

    /// Fulfills a `Promise<Void>`. (PromiseKit's name: a `fulfill()` would
    /// make `let f = seal.fulfill` ambiguous, PromiseKit issue #990.)
    @inlinable
    @inline(never)
    public func fulfill_() {
        fulfill(())
    }
}
