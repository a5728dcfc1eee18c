/// Starts a chain with the thenable `body` returns; a thrown error rejects.
/// Reads better than starting a chain with a call: each step below it
/// lines up.
@inlinable
@inline(never)
public func firstly<U: Thenable>(execute body: () throws -> U) -> Promise<U.T> {
    do {
        let (rp, rpbox) = Promise<U.T>.makePending()
        try body().pipe { rpbox.settle($0) }
        return rp
    } catch {
        return Promise(error: error)
    }
}

/// Starts a chain with the guarantee `body` returns.
@inlinable
@inline(never)
public func firstly<T>(execute body: () -> Guarantee<T>) -> Guarantee<T> {
    body()
}
