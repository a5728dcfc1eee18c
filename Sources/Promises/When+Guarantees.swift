// The `when`s that cannot fail: of guarantees, and `when(resolved:)`.

/// Waits for every promise, fulfilled or not; never fails.
@inlinable
@inline(never)
public func when<T>(resolved promises: Promise<T>...) -> Guarantee<[Result<T>]> {
    when(resolved: promises)
}

/// Waits for every promise, fulfilled or not; never fails. The results keep
/// the promises' order.
@inlinable
@inline(never)
public func when<T>(resolved promises: [Promise<T>]) -> Guarantee<[Result<T>]> {
    guard !promises.isEmpty else { return .value([]) }
    let (rg, rgbox) = Guarantee<[Result<T>]>.makePending()
    let collector = Collector<Result<T>>(count: promises.count)
    for (index, promise) in promises.enumerated() {
        promise.pipe { result in
            if let all = collector.store(result, at: index) {
                rgbox.settle(all)
            }
        }
    }
    return rg
}

/// Waits for every guarantee.
@inlinable
@inline(never)
public func when(_ guarantees: Guarantee<Void>...) -> Guarantee<Void> {
    when(guarantees: guarantees)
}

/// Waits for every guarantee; keeps their order.
@inlinable
@inline(never)
public func when<T>(_ guarantees: Guarantee<T>...) -> Guarantee<[T]> {
    when(guarantees: guarantees)
}

/// Waits for every guarantee; keeps their order.
@inlinable
@inline(never)
public func when<T>(guarantees: [Guarantee<T>]) -> Guarantee<[T]> {
    guard !guarantees.isEmpty else { return .value([]) }
    let (rg, rgbox) = Guarantee<[T]>.makePending()
    let collector = Collector<T>(count: guarantees.count)
    for (index, guarantee) in guarantees.enumerated() {
        guarantee.box.pipe { value in
            if let all = collector.store(value, at: index) {
                rgbox.settle(all)
            }
        }
    }
    return rg
}

/// Waits for every guarantee.
@inlinable
@inline(never)
public func when(guarantees: [Guarantee<Void>]) -> Guarantee<Void> {
    let all: Guarantee<[Void]> = when(guarantees: guarantees)
    return all.asVoid()
}

/// Waits for two guarantees.
@inlinable
@inline(never)
public func when<U, V>(guarantees gu: Guarantee<U>, _ gv: Guarantee<V>) -> Guarantee<(U, V)> {
    when(guarantees: [gu.asVoid(), gv.asVoid()]).map(on: nil) {
        (gu.value!, gv.value!)
    }
}

/// Waits for three guarantees.
@inlinable
@inline(never)
public func when<U, V, W>(guarantees gu: Guarantee<U>, _ gv: Guarantee<V>, _ gw: Guarantee<W>) -> Guarantee<(U, V, W)> {
    when(guarantees: [gu.asVoid(), gv.asVoid(), gw.asVoid()]).map(on: nil) {
        (gu.value!, gv.value!, gw.value!)
    }
}

/// Waits for four guarantees.
@inlinable
@inline(never)
public func when<U, V, W, X>(
    guarantees gu: Guarantee<U>, _ gv: Guarantee<V>, _ gw: Guarantee<W>, _ gx: Guarantee<X>
) -> Guarantee<(U, V, W, X)> {
    when(guarantees: [gu.asVoid(), gv.asVoid(), gw.asVoid(), gx.asVoid()]).map(on: nil) {
        (gu.value!, gv.value!, gw.value!, gx.value!)
    }
}

/// Waits for five guarantees.
@inlinable
@inline(never)
public func when<U, V, W, X, Y>(
    guarantees gu: Guarantee<U>, _ gv: Guarantee<V>, _ gw: Guarantee<W>, _ gx: Guarantee<X>, _ gy: Guarantee<Y>
) -> Guarantee<(U, V, W, X, Y)> {
    when(guarantees: [gu.asVoid(), gv.asVoid(), gw.asVoid(), gx.asVoid(), gy.asVoid()]).map(on: nil) {
        (gu.value!, gv.value!, gw.value!, gx.value!, gy.value!)
    }
}
