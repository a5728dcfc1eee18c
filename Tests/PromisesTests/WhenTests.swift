import Dispatch
import Promises
import Testing

@Suite("when")
struct WhenTests {
    @Test("when(fulfilled: [promises]) keeps the given order whatever order they fulfil in")
    func keepsOrder() async throws {
        let pairs = (0..<5).map { _ in Promise<Int>.pending() }
        let all = when(fulfilled: pairs.map(\.promise))
        for index in [3, 0, 4, 1] {
            pairs[index].resolver.fulfill(index * 10)
            #expect(all.isPending)
        }
        pairs[2].resolver.fulfill(20)
        #expect(try await all.fulfilledValue() == [0, 10, 20, 30, 40])
    }

    @Test("when(fulfilled: []) fulfils with []")
    func empty() async throws {
        let all: Promise<[Int]> = when(fulfilled: [Promise<Int>]())
        #expect(try await all.fulfilledValue() == [])
    }

    @Test("fail-fast: the first rejection rejects at once, while the others are still pending")
    func failFast() async throws {
        let pairs = (0..<4).map { _ in Promise<Int>.pending() }
        let all = when(fulfilled: pairs.map(\.promise))
        pairs[0].resolver.fulfill(0)
        pairs[2].resolver.reject(TestError.numbered(2))
        #expect(try await all.rejection() as? TestError == .numbered(2))
        #expect(pairs[1].promise.isPending && pairs[3].promise.isPending)
        pairs[3].resolver.reject(TestError.numbered(3))
        pairs[1].resolver.fulfill(1)
        #expect(all.error as? TestError == .numbered(2), "a later rejection replaced the first")
    }

    @Test("variadic when(fulfilled:) of Promise<Void>s")
    func variadicVoid() async throws {
        let (a, resolveA) = Promise<Void>.pending()
        let (b, resolveB) = Promise<Void>.pending()
        let both: Promise<Void> = when(fulfilled: a, b)
        resolveA.fulfill_()
        #expect(both.isPending)
        resolveB.fulfill_()
        try await both.fulfilledValue()
        let failing: Promise<Void> = when(fulfilled: Promise<Void>.value, Promise<Void>(error: TestError.first))
        #expect(try await failing.rejection() as? TestError == .first)
        let array: Promise<Void> = when(fulfilled: [Promise<Void>.value, Promise<Void>()])
        try await array.fulfilledValue()
    }

    @Test("when(fulfilled:) of 2 to 5 thenables of different types gives a tuple")
    func tuples() async throws {
        let (slow, resolver) = Promise<String>.pending()
        let two = when(fulfilled: Promise.value(1), slow)
        #expect(two.isPending)
        resolver.fulfill("s")
        let pair = try await two.fulfilledValue()
        #expect(pair.0 == 1 && pair.1 == "s")
        let three = try await when(fulfilled: Promise.value(1), Promise.value("b"), Guarantee.value(true))
            .fulfilledValue()
        #expect(three.0 == 1 && three.1 == "b" && three.2)
        let four = try await when(
            fulfilled: Promise.value(1), Promise.value("b"), Promise.value(3.5), Promise.value([4])
        ).fulfilledValue()
        #expect(four.0 == 1 && four.1 == "b" && four.2 == 3.5 && four.3 == [4])
        let five = try await when(
            fulfilled: Promise.value(1), Promise.value(2), Promise.value(3), Promise.value(4), Promise.value(5)
        ).fulfilledValue()
        #expect([five.0, five.1, five.2, five.3, five.4] == [1, 2, 3, 4, 5])
    }

    @Test("a tuple when rejects with the first rejection")
    func tupleRejects() async throws {
        let (pending, resolver) = Promise<Int>.pending()
        let two = when(fulfilled: pending, Promise<String>(error: TestError.second))
        #expect(try await two.rejection() as? TestError == .second)
        resolver.fulfill(0)
        let five = when(
            fulfilled: Promise.value(1), Promise.value(2), Promise<Int>(error: TestError.numbered(3)),
            Promise.value(4), Promise.value(5))
        #expect(try await five.rejection() as? TestError == .numbered(3))
    }

    @Test("when(fulfilled: [guarantees]) is a Promise of the values, in order")
    func ofGuarantees() async {
        let (late, resolve) = Guarantee<Int>.pending()
        let all: Promise<[Int]> = when(fulfilled: [late, Guarantee.value(2)])
        #expect(all.isPending)
        resolve(1)
        _ = await all.outcome()
        #expect(all.value == [1, 2])
    }

    @Test("when(resolved:) waits for every promise and keeps each outcome, in order; it never fails")
    func resolved() async {
        let pairs = (0..<3).map { _ in Promise<Int>.pending() }
        let all = when(resolved: pairs.map(\.promise))
        pairs[1].resolver.reject(TestError.numbered(1))
        #expect(all.isPending, "when(resolved:) settled before every promise had")
        pairs[2].resolver.fulfill(2)
        #expect(all.isPending)
        pairs[0].resolver.fulfill(0)
        _ = await all.outcome()
        let results = all.value ?? []
        #expect(results.map { $0.isFulfilled } == [true, false, true])
        if results.count == 3, case .rejected(let error) = results[1] {
            #expect(error as? TestError == .numbered(1))
        }
        let variadic = when(resolved: Promise.value(1), Promise<Int>(error: TestError.first))
        _ = await variadic.outcome()
        #expect(variadic.value?.map(\.isFulfilled) == [true, false])
        let none = when(resolved: [Promise<Int>]())
        #expect(none.value?.isEmpty == true)
    }

    @Test("when(guarantees:) and when(_:): arrays, variadic Void, pairs and triples")
    func guarantees() async {
        let (late, resolve) = Guarantee<String>.pending()
        let array = when(guarantees: [Guarantee.value("a"), late])
        #expect(array.isPending)
        resolve("b")
        _ = await array.outcome()
        #expect(array.value == ["a", "b"])

        let (voidLate, voidResolve) = Guarantee<Void>.pending()
        let variadic: Guarantee<Void> = when(Guarantee<Void>.value, voidLate)
        #expect(variadic.isPending)
        voidResolve(())
        #expect(await variadic.outcome()?.isFulfilled == true)

        let pair = when(guarantees: Guarantee.value(1), Guarantee.value("x"))
        _ = await pair.outcome()
        #expect(pair.value?.0 == 1 && pair.value?.1 == "x")
        let triple = when(guarantees: Guarantee.value(1), Guarantee.value("x"), Guarantee.value([2]))
        _ = await triple.outcome()
        #expect(triple.value?.2 == [2])
        let none: Guarantee<[Int]> = when(guarantees: [Guarantee<Int>]())
        #expect(none.value == [])
    }
}

/// Makes pending promises on demand and counts how many are outstanding.
/// None settles before the first `limit` have been pulled, so the count
/// reaches the limit whatever the timing; after that they settle at random.
final class LazyWork: @unchecked Sendable {
    // @unchecked Sendable: every stored property is a let of a thread-safe type.
    let count: Int
    let limit: Int
    let running = HighWater()
    let pulled = Counter()
    let rejectAt: Int?
    private let index = Locked(0)
    private let gate = Locked<(open: Bool, held: [@Sendable () -> Void])>((false, []))

    init(count: Int, limit: Int, rejectAt: Int? = nil) {
        self.count = count
        self.limit = limit
        self.rejectAt = rejectAt
    }

    /// A pending promise that settles on another thread once the gate is open.
    func make(_ index: Int) -> Promise<Int> {
        running.enter()
        let (promise, resolver) = Promise<Int>.pending()
        let rejects = index == rejectAt
        afterGate {
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...300))) {
                self.running.leave()
                if rejects { resolver.reject(TestError.numbered(index)) } else { resolver.fulfill(index) }
            }
        }
        if pulled.increment() == min(limit, count) { openGate() }
        return promise
    }

    private func afterGate(_ work: @escaping @Sendable () -> Void) {
        let now = gate.withLock { gate -> Bool in
            if gate.open { return true }
            gate.held.append(work)
            return false
        }
        if now { work() }
    }

    private func openGate() {
        let held = gate.withLock { gate -> [@Sendable () -> Void] in
            gate.open = true
            defer { gate.held = [] }
            return gate.held
        }
        for work in held { work() }
    }

    func iterator() -> AnyIterator<Promise<Int>> {
        AnyIterator {
            let next = self.index.withLock { index -> Int? in
                guard index < self.count else { return nil }
                defer { index += 1 }
                return index
            }
            return next.map(self.make)
        }
    }
}

@Suite("when(fulfilled:concurrently:)")
struct WhenConcurrentlyTests {
    @Test("never runs more than N at once, reaches N, and keeps iterator order", arguments: [1, 3, 8])
    func limit(_ limit: Int) async throws {
        let work = LazyWork(count: 60, limit: limit)
        let all = when(fulfilled: work.iterator(), concurrently: limit)
        #expect(try await all.fulfilledValue() == Array(0..<60))
        #expect(work.running.highest <= limit)
        #expect(work.running.highest == limit)
        #expect(work.pulled.value == 60)
    }

    @Test("a limit above the count runs them all")
    func limitAboveCount() async throws {
        let work = LazyWork(count: 5, limit: 50)
        #expect(try await when(fulfilled: work.iterator(), concurrently: 50).fulfilledValue() == Array(0..<5))
    }

    @Test("an empty iterator fulfils with []")
    func emptyIterator() async throws {
        let all = when(fulfilled: [Promise<Int>]().makeIterator(), concurrently: 2)
        #expect(try await all.fulfilledValue() == [])
    }

    @Test("concurrently: 0 or less rejects with badInput", arguments: [0, -1])
    func badLimit(_ limit: Int) async throws {
        let work = LazyWork(count: 3, limit: 1)
        let error = try await when(fulfilled: work.iterator(), concurrently: limit).rejection()
        guard case PMKError.badInput = error else {
            Issue.record("expected badInput, got \(error)")
            return
        }
        #expect(work.pulled.value == 0)
    }

    @Test("a rejection rejects the whole and pulls no more from the iterator")
    func rejectionStopsPulling() async throws {
        let work = LazyWork(count: 50, limit: 1, rejectAt: 2)
        let all = when(fulfilled: work.iterator(), concurrently: 1)
        #expect(try await all.rejection() as? TestError == .numbered(2))
        #expect(work.pulled.value == 3)
    }

    @Test("already-resolved promises from the iterator work too")
    func resolvedElements() async throws {
        let promises = (0..<500).map { Promise.value($0) }
        #expect(try await when(fulfilled: promises.makeIterator(), concurrently: 4).fulfilledValue() == Array(0..<500))
    }

    @Test("many already-resolved promises with a small limit do not overflow the stack")
    func manyResolvedElements() async {
        await #expect(processExitsWith: .success) {
            let promises = (0..<100_000).map { Promise.value($0) }
            let values = try when(fulfilled: promises.makeIterator(), concurrently: 1).wait()
            precondition(values == Array(0..<100_000))
        }
    }
}
