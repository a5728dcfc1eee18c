import Dispatch

extension Thenable where T: Sequence {
    /// `map` of each element.
    @inlinable
    @inline(never)
    public func mapValues<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U]> {
        map(on: on, flags: flags) { try $0.map(transform) }
    }

    /// `flatMap` of each element.
    @inlinable
    @inline(never)
    public func flatMapValues<U: Sequence>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.Iterator.Element]> {
        map(on: on, flags: flags) { try $0.flatMap(transform) }
    }

    /// `compactMap` of each element.
    @inlinable
    @inline(never)
    public func compactMapValues<U>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U?
    ) -> Promise<[U]> {
        map(on: on, flags: flags) { try $0.compactMap(transform) }
    }

    /// Maps each element to a thenable and waits for all of them
    /// (`when(fulfilled:)`), keeping their order.
    @inlinable
    @inline(never)
    public func thenMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.T]> {
        then(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
    }

    /// Like `thenMap`, then flattens the sequences the thenables produce.
    @inlinable
    @inline(never)
    public func thenFlatMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.T.Iterator.Element]> where U.T: Sequence {
        then(on: on, flags: flags) {
            when(fulfilled: try $0.map(transform))
        }.map(on: nil) {
            $0.flatMap { $0 }
        }
    }

    /// The elements `isIncluded` keeps.
    @inlinable
    @inline(never)
    public func filterValues(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> Promise<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.filter(isIncluded) }
    }

    /// The first element `test` accepts; `PMKError.emptySequence` if none.
    @inlinable
    @inline(never)
    public func firstValue(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil,
        where test: @escaping (T.Iterator.Element) -> Bool
    ) -> Promise<T.Iterator.Element> {
        map(on: on, flags: flags) {
            for element in $0 where test(element) {
                return element
            }
            throw PMKError.emptySequence
        }
    }
}

extension Thenable where T: Collection {
    /// The first element; `PMKError.emptySequence` if there is none.
    @inlinable
    public var firstValue: Promise<T.Iterator.Element> {
        map(on: nil) { collection in
            guard let first = collection.first else { throw PMKError.emptySequence }
            return first
        }
    }
}

extension Thenable where T: Collection {
    /// The last element; `PMKError.emptySequence` if there is none. A
    /// collection that cannot step back, such as a `Set`, is walked to its
    /// end (PromiseKit stops the process there instead).
    @inlinable
    public var lastValue: Promise<T.Iterator.Element> {
        map(on: nil) { collection in
            guard !collection.isEmpty else { throw PMKError.emptySequence }
            return collection[collection.index(collection.startIndex, offsetBy: collection.count - 1)]
        }
    }
}

extension Thenable where T: BidirectionalCollection {
    /// The last element, found by stepping back from the end;
    /// `PMKError.emptySequence` if there is none.
    @inlinable
    public var lastValue: Promise<T.Iterator.Element> {
        map(on: nil) { collection in
            guard let last = collection.last else { throw PMKError.emptySequence }
            return last
        }
    }
}

extension Thenable where T: Sequence, T.Iterator.Element: Comparable {
    /// The elements, sorted.
    @inlinable
    @inline(never)
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map, flags: DispatchWorkItemFlags? = nil
    ) -> Promise<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted() }
    }
}
