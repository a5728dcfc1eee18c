import Dispatch

// PromiseKit's sequence helpers on a guarantee: closures that cannot throw,
// so the result cannot fail either.

extension Guarantee where T: Sequence {
    /// Maps each element to a guarantee and waits for all of them, keeping
    /// their order.
    @inlinable
    @inline(never)
    public func thenMap<U>(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T.Iterator.Element) -> Guarantee<U>) -> Guarantee<[U]> {
        then(on: on, flags: flags) { when(guarantees: $0.map(transform)) }
    }

    /// Like `thenMap`, then flattens the sequences the guarantees produce.
    @inlinable
    @inline(never)
    public func thenFlatMap<U: Sequence>(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T.Iterator.Element) -> Guarantee<U>) -> Guarantee<[U.Iterator.Element]> {
        then(on: on, flags: flags) {
            when(guarantees: $0.map(transform))
        }.map(on: nil) {
            $0.flatMap { $0 }
        }
    }

    /// `map` of each element.
    @inlinable
    @inline(never)
    public func mapValues<U>(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T.Iterator.Element) -> U) -> Guarantee<[U]> {
        map(on: on, flags: flags) { $0.map(transform) }
    }

    /// `flatMap` of each element.
    @inlinable
    @inline(never)
    public func flatMapValues<U: Sequence>(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T.Iterator.Element) -> U) -> Guarantee<[U.Iterator.Element]> {
        map(on: on, flags: flags) { $0.flatMap(transform) }
    }

    /// `compactMap` of each element.
    @inlinable
    @inline(never)
    public func compactMapValues<U>(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ transform: @escaping (T.Iterator.Element) -> U?) -> Guarantee<[U]> {
        map(on: on, flags: flags) { $0.compactMap(transform) }
    }

    /// The elements `isIncluded` keeps.
    @inlinable
    @inline(never)
    public func filterValues(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, _ isIncluded: @escaping (T.Iterator.Element) -> Bool) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.filter(isIncluded) }
    }

    /// The elements, sorted by `areInIncreasingOrder`.
    @inlinable
    @inline(never)
    public func sortedValues(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil, by areInIncreasingOrder: @escaping (T.Iterator.Element, T.Iterator.Element) -> Bool) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted(by: areInIncreasingOrder) }
    }
}

extension Guarantee where T: Sequence, T.Iterator.Element: Comparable {
    /// The elements, sorted.
    @inlinable
    @inline(never)
    public func sortedValues(on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted() }
    }
}
