import Synchronization

/// Resolves as the first of `thenables` to resolve, fulfilled or rejected.
/// No input rejects with `PMKError.badInput`.
@inlinable
@inline(never)
public func race<U: Thenable>(_ thenables: U...) -> Promise<U.T> {
    race(thenables)
}

/// Resolves as the first of `thenables` to resolve, fulfilled or rejected.
/// An empty array rejects with `PMKError.badInput`.
@inlinable
@inline(never)
public func race<U: Thenable>(_ thenables: [U]) -> Promise<U.T> {
    guard !thenables.isEmpty else {
        return Promise(error: PMKError.badInput)
    }
    let (rp, rpbox) = Promise<U.T>.makePending()
    for thenable in thenables {
        // Sealing twice is harmless: the first result wins.
        thenable.pipe { rpbox.settle($0) }
    }
    return rp
}

/// Resolves as the first guarantee to resolve.
@inlinable
@inline(never)
public func race<T>(_ guarantees: Guarantee<T>...) -> Guarantee<T> {
    let (rg, rgbox) = Guarantee<T>.makePending()
    for guarantee in guarantees {
        guarantee.box.pipe { rgbox.settle($0) }
    }
    return rg
}

/// Fulfills as the first of `thenables` to fulfill; rejects with
/// `PMKError.noWinner` when all reject, `PMKError.badInput` when empty.
@inlinable
@inline(never)
public func race<U: Thenable>(fulfilled thenables: [U]) -> Promise<U.T> {
    guard !thenables.isEmpty else {
        return Promise(error: PMKError.badInput)
    }
    let (rp, rpbox) = Promise<U.T>.makePending()
    let losers = RejectionCounter(thenables.count)
    for thenable in thenables {
        thenable.pipe { result in
            switch result {
            case .fulfilled:
                rpbox.settle(result)
            case .rejected:
                if losers.countOne() {
                    rpbox.settle(.rejected(PMKError.noWinner))
                }
            }
        }
    }
    return rp
}

/// Counts rejections down; says when the last one arrives.
@usableFromInline
final class RejectionCounter: Sendable {
    let remaining: Atomic<Int>

    @usableFromInline
    init(_ count: Int) {
        remaining = Atomic(count)
    }

    /// True for the rejection that brings the count to zero.
    @usableFromInline
    func countOne() -> Bool {
        remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }
}
