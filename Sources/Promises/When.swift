import Locking
import Synchronization

/// Collects the values of thenables that resolve in any order, into the
/// order they were given in. Shared by the `when` family.
@usableFromInline
final class Collector<Value>: @unchecked Sendable {
    // @unchecked Sendable: `values`, `remaining` and `finished` are touched
    // only inside `lock.withLock`.
    @exclusivity(unchecked) var values: [Value?]
    @exclusivity(unchecked) var remaining: Int
    @exclusivity(unchecked) var finished = false
    let lock = Mutex<Void>(())

    @usableFromInline
    init(count: Int) {
        values = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Stores `value` at `index`; returns all values once the last arrives.
    @usableFromInline
    func store(_ value: Value, at index: Int) -> [Value]? {
        var all: [Value]?
        lock.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) {
            guard !finished else { return }
            values[index] = value
            remaining -= 1
            if remaining == 0 {
                finished = true
                all = values.map { $0.unsafelyUnwrapped }
                values = []
            }
        }
        return all
    }

    /// Marks the collection failed; true for the first caller only.
    @usableFromInline
    func fail() -> Bool {
        lock.withLock(announcing: Unmanaged.passUnretained(self).toOpaque()) {
            defer { finished = true }
            return !finished
        }
    }
}

/// Waits for every thenable; fulfills with their values in the given order,
/// or rejects with the first rejection (fail-fast).
@inlinable
@inline(never)
public func when<U: Thenable>(fulfilled thenables: [U]) -> Promise<[U.T]> {
    guard !thenables.isEmpty else { return .value([]) }
    let (rp, rpbox) = Promise<[U.T]>.makePending()
    let collector = Collector<U.T>(count: thenables.count)
    for (index, thenable) in thenables.enumerated() {
        thenable.pipe { result in
            switch result {
            case .fulfilled(let value):
                if let all = collector.store(value, at: index) {
                    rpbox.settle(.fulfilled(all))
                }
            case .rejected(let error):
                if collector.fail() {
                    rpbox.settle(.rejected(error))
                }
            }
        }
    }
    return rp
}

/// Waits for thenables of any types; fulfills with their values, in the
/// given order, or rejects with the first rejection. Swift picks this for
/// an array that mixes promises and guarantees, or whose result is wanted
/// as `Promise<[Any]>`.
@inlinable
@inline(never)
public func when(fulfilled thenables: [any Thenable]) -> Promise<[Any]> {
    let erased: [Promise<Any>] = thenables.map { erasingValue(of: $0) }
    return when(fulfilled: erased)
}

/// `thenable`'s outcome, its value as an `Any`.
@inlinable
func erasingValue<U: Thenable>(of thenable: U) -> Promise<Any> {
    thenable.map(on: nil) { $0 }
}

/// Waits for every promise; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable>(fulfilled thenables: U...) -> Promise<Void> where U.T == Void {
    when(fulfilled: thenables)
}

/// Waits for every promise; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable>(fulfilled thenables: [U]) -> Promise<Void> where U.T == Void {
    let all: Promise<[Void]> = when(fulfilled: thenables)
    return all.map(on: nil) { _ in }
}

/// Waits for two thenables; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable, V: Thenable>(fulfilled pu: U, _ pv: V) -> Promise<(U.T, V.T)> {
    when(fulfilled: [pu.asVoid(), pv.asVoid()]).map(on: nil) {
        (pu.value!, pv.value!)
    }
}

/// Waits for three thenables; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable, V: Thenable, W: Thenable>(fulfilled pu: U, _ pv: V, _ pw: W) -> Promise<(U.T, V.T, W.T)> {
    when(fulfilled: [pu.asVoid(), pv.asVoid(), pw.asVoid()]).map(on: nil) {
        (pu.value!, pv.value!, pw.value!)
    }
}

/// Waits for four thenables; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable, V: Thenable, W: Thenable, X: Thenable>(
    fulfilled pu: U, _ pv: V, _ pw: W, _ px: X
) -> Promise<(U.T, V.T, W.T, X.T)> {
    when(fulfilled: [pu.asVoid(), pv.asVoid(), pw.asVoid(), px.asVoid()]).map(on: nil) {
        (pu.value!, pv.value!, pw.value!, px.value!)
    }
}

/// Waits for five thenables; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable, V: Thenable, W: Thenable, X: Thenable, Y: Thenable>(
    fulfilled pu: U, _ pv: V, _ pw: W, _ px: X, _ py: Y
) -> Promise<(U.T, V.T, W.T, X.T, Y.T)> {
    when(fulfilled: [pu.asVoid(), pv.asVoid(), pw.asVoid(), px.asVoid(), py.asVoid()]).map(on: nil) {
        (pu.value!, pv.value!, pw.value!, px.value!, py.value!)
    }
}
