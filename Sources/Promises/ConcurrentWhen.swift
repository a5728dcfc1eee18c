import Locking
import Synchronization

/// Runs at most `concurrently` of the iterator's promises at a time, pulling
/// the next as each fulfills; fulfills with all values in iterator order, or
/// rejects with the first rejection and pulls no more. A limit below 1
/// rejects with `PMKError.badInput`.
public func when<It: IteratorProtocol>(fulfilled promiseIterator: It, concurrently: Int) -> Promise<[It.Element.T]>
where It.Element: Thenable {
    guard concurrently > 0 else {
        return Promise(error: PMKError.badInput)
    }
    let (promise, box) = Promise<[It.Element.T]>.makePending()
    let run = ConcurrentWhen(promiseIterator, failsFast: true) { outcome in
        switch outcome {
        case .fulfilled(let results):
            box.settle(
                .fulfilled(
                    results.map { result in
                        guard case .fulfilled(let value) = result else {
                            preconditionFailure("Promises: a rejection in a fulfilled when")
                        }
                        return value
                    }))
        case .rejected(let error):
            box.settle(.rejected(error))
        }
    }
    run.start(concurrently)
    return promise
}

/// Runs at most `concurrently` of the iterator's promises at a time, pulling
/// the next as each resolves, fulfilled or not; never fails. The results
/// keep iterator order. A limit below 1 gives the one result
/// `.rejected(PMKError.badInput)`, as in PromiseKit.
public func when<It: IteratorProtocol>(
    resolved promiseIterator: It, concurrently: Int
) -> Guarantee<[Result<It.Element.T>]> where It.Element: Thenable {
    guard concurrently > 0 else {
        return .value([.rejected(PMKError.badInput)])
    }
    let (guarantee, box) = Guarantee<[Result<It.Element.T>]>.makePending()
    let run = ConcurrentWhen(promiseIterator, failsFast: false) { outcome in
        if case .fulfilled(let results) = outcome {
            box.settle(results)
        }
    }
    run.start(concurrently)
    return guarantee
}

/// The state of one `when(fulfilled:concurrently:)` or
/// `when(resolved:concurrently:)`.
///
/// Starting an element can complete it at once (an already-resolved
/// promise), and a completion starts the next element: done by recursion,
/// a long iterator of resolved promises would overflow the stack. Instead
/// one caller at a time is the pump: others — completions on other threads,
/// or nested ones on the pump's own stack — only add to `wanted`, and the
/// pump's loop starts that many more.
final class ConcurrentWhen<It: IteratorProtocol>: @unchecked Sendable where It.Element: Thenable {
    // @unchecked Sendable: the `var`s are touched only inside `lock.withLock`;
    // `finish` is called once, by whichever thread ends the run.
    typealias Value = It.Element.T

    @exclusivity(unchecked) var iterator: It
    @exclusivity(unchecked) var results: [Result<Value>?] = []
    @exclusivity(unchecked) var running = 0
    @exclusivity(unchecked) var wanted = 0
    @exclusivity(unchecked) var pumping = false
    @exclusivity(unchecked) var exhausted = false
    @exclusivity(unchecked) var finished = false
    let lock = Mutex<Void>(())
    /// Whether the first rejection ends the run (`when(fulfilled:)`).
    let failsFast: Bool
    /// Gets every result in iterator order, or the rejection that ended a
    /// fail-fast run.
    let finish: (Result<[Result<Value>]>) -> Void

    init(_ iterator: It, failsFast: Bool, finish: @escaping (Result<[Result<Value>]>) -> Void) {
        self.iterator = iterator
        self.failsFast = failsFast
        self.finish = finish
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
                complete(next.index, with: result)
            }
        }
        finishIfDone()
    }

    /// Records the result of the element at `index`, then starts the next —
    /// or, for the first rejection of a fail-fast run, ends the run.
    func complete(_ index: Int, with result: Result<Value>) {
        let failure = lock.withLock(announcing: address) { () -> (any Error)? in
            running -= 1
            guard !finished else { return nil }
            results[index] = result
            if failsFast, case .rejected(let error) = result {
                finished = true
                return error
            }
            return nil
        }
        if let failure {
            finish(.rejected(failure))
        } else {
            start(1)
        }
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
            results.append(nil)
            return (results.count - 1, thenable)
        }
    }

    func finishIfDone() {
        var all: [Result<Value>]?
        lock.withLock(announcing: address) {
            guard !finished, exhausted, running == 0 else { return }
            finished = true
            all = results.map { $0.unsafelyUnwrapped }
        }
        if let all {
            finish(.fulfilled(all))
        }
    }
}
