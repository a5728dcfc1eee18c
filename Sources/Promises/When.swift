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

/// Waits for every guarantee; keeps their order.
@inlinable
@inline(never)
public func when<T>(fulfilled guarantees: [Guarantee<T>]) -> Guarantee<[T]> {
    when(guarantees: guarantees)
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
public func when<U: Thenable, V: Thenable, W: Thenable, X: Thenable>(fulfilled pu: U, _ pv: V, _ pw: W, _ px: X) -> Promise<(U.T, V.T, W.T, X.T)> {
    when(fulfilled: [pu.asVoid(), pv.asVoid(), pw.asVoid(), px.asVoid()]).map(on: nil) {
        (pu.value!, pv.value!, pw.value!, px.value!)
    }
}

/// Waits for five thenables; rejects with the first rejection.
@inlinable
@inline(never)
public func when<U: Thenable, V: Thenable, W: Thenable, X: Thenable, Y: Thenable>(fulfilled pu: U, _ pv: V, _ pw: W, _ px: X, _ py: Y) -> Promise<(U.T, V.T, W.T, X.T, Y.T)> {
    when(fulfilled: [pu.asVoid(), pv.asVoid(), pw.asVoid(), px.asVoid(), py.asVoid()]).map(on: nil) {
        (pu.value!, pv.value!, pw.value!, px.value!, py.value!)
    }
}

/// Runs at most `concurrently` of the iterator's promises at a time, pulling
/// the next as each fulfills; fulfills with all values in iterator order, or
/// rejects with the first rejection and pulls no more.
public func when<It: IteratorProtocol>(fulfilled promiseIterator: It, concurrently: Int) -> Promise<[It.Element.T]> where It.Element: Thenable {
    guard concurrently > 0 else {
        return Promise(error: PMKError.badInput)
    }
    let run = ConcurrentWhen(promiseIterator)
    run.start(concurrently)
    return run.promise
}

/// The state of one `when(fulfilled:concurrently:)`.
///
/// Starting an element can complete it at once (an already-resolved
/// promise), and a completion starts the next element: done by recursion,
/// a long iterator of resolved promises would overflow the stack. Instead
/// one caller at a time is the pump: others — completions on other threads,
/// or nested ones on the pump's own stack — only add to `wanted`, and the
/// pump's loop starts that many more.
final class ConcurrentWhen<It: IteratorProtocol>: @unchecked Sendable where It.Element: Thenable {
    // @unchecked Sendable: the `var`s are touched only inside `lock.withLock`.
    typealias Value = It.Element.T

    @exclusivity(unchecked) var iterator: It
    @exclusivity(unchecked) var values: [Value?] = []
    @exclusivity(unchecked) var running = 0
    @exclusivity(unchecked) var wanted = 0
    @exclusivity(unchecked) var pumping = false
    @exclusivity(unchecked) var exhausted = false
    @exclusivity(unchecked) var finished = false
    let lock = Mutex<Void>(())
    let promise: Promise<[Value]>
    let box: EmptyBox<Sealant<Result<[Value]>>>

    init(_ iterator: It) {
        self.iterator = iterator
        (promise, box) = Promise<[Value]>.makePending()
    }

    var address: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// Asks for `count` more elements to be started; pumps if no one is.
    func start(_ count: Int) {
        let pump = lock.withLock(announcing: address) { () -> Bool in
            wanted += count
            guard !pumping else { return false }
            pumping = true
            return true
        }
        guard pump else { return }
        while let next = takeNext() {
            next.thenable.pipe { [self] result in
                switch result {
                case .fulfilled(let value):
                    lock.withLock(announcing: address) {
                        if !finished { values[next.index] = value }
                        running -= 1
                    }
                    start(1)
                case .rejected(let error):
                    let first = lock.withLock(announcing: address) { () -> Bool in
                        defer { finished = true }
                        return !finished
                    }
                    if first {
                        box.settle(.rejected(error))
                    }
                }
            }
        }
        finishIfDone()
    }

    /// The next element to start; nil stops the pump (checked and cleared
    /// under the lock, so a request that comes after is pumped by its caller).
    func takeNext() -> (index: Int, thenable: It.Element)? {
        lock.withLock(announcing: address) {
            guard wanted > 0, !finished, !exhausted else {
                pumping = false
                return nil
            }
            guard let thenable = iterator.next() else {
                exhausted = true
                pumping = false
                return nil
            }
            wanted -= 1
            running += 1
            values.append(nil)
            return (values.count - 1, thenable)
        }
    }

    func finishIfDone() {
        var all: [Value]?
        lock.withLock(announcing: address) {
            guard !finished, exhausted, running == 0 else { return }
            finished = true
            all = values.map { $0.unsafelyUnwrapped }
        }
        if let all {
            box.settle(.fulfilled(all))
        }
    }
}

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
public func when(guarantees: Guarantee<Void>...) -> Guarantee<Void> {
    when(guarantees: guarantees)
}

/// Waits for every guarantee.
@inlinable
@inline(never)
public func when(guarantees: [Guarantee<Void>]) -> Guarantee<Void> {
    let all: Guarantee<[Void]> = when(guarantees: guarantees)
    return all.map(on: nil) { _ in }
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
