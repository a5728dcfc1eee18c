import Dispatch

// PromiseKit's sequence helpers on a guarantee: closures that cannot throw,
// so the result cannot fail either.

extension Guarantee where T: Sequence {
    /// Maps each element to a guarantee and waits for all of them, keeping
    /// their order.
    @inlinable
    @inline(never)
    public func thenMap<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> Guarantee<U>
    ) -> Guarantee<[U]> {
        then(on: on, flags: flags) { when(guarantees: $0.map(transform)) }
    }

    /// Like `thenMap`, then flattens the sequences the thenables produce.
    /// The result is a guarantee, as in PromiseKit, so a thenable that
    /// rejects is a programming error: it stops the process, with the error.
    @inlinable
    @inline(never)
    public func thenFlatMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.T.Iterator.Element]> where U.T: Sequence {
        let all: Promise<[U.T]> = then(on: on, flags: flags) { when(fulfilled: $0.map(transform)) }
        return all.map(on: nil) {
            $0.flatMap { $0 }
        }.recover(on: nil) { error -> Guarantee<[U.T.Iterator.Element]> in
            fatalError("Promises: a thenable given to Guarantee.thenFlatMap rejected: \(error)")
        }
    }

    /// `map` of each element.
    @inlinable
    @inline(never)
    public func mapValues<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U]> {
        map(on: on, flags: flags) { $0.map(transform) }
    }

    /// `flatMap` of each element.
    @inlinable
    @inline(never)
    public func flatMapValues<U: Sequence>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.Iterator.Element]> {
        map(on: on, flags: flags) { $0.flatMap(transform) }
    }

    /// `compactMap` of each element.
    @inlinable
    @inline(never)
    public func compactMapValues<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U?
    ) -> Guarantee<[U]> {
        map(on: on, flags: flags) { $0.compactMap(transform) }
    }

    /// The elements `isIncluded` keeps.
    @inlinable
    @inline(never)
    public func filterValues(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.filter(isIncluded) }
    }

    /// The elements, sorted by `areInIncreasingOrder`.
    @inlinable
    @inline(never)
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ areInIncreasingOrder: @escaping (T.Iterator.Element, T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted(by: areInIncreasingOrder) }
    }
}

extension Guarantee where T: Sequence, T.Iterator.Element: Comparable {
    /// The elements, sorted.
    @inlinable
    @inline(never)
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil
    ) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted() }
    }
}
