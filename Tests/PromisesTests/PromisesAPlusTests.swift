import Dispatch
import Promises
import Testing

// Promises/A+ 1.1 (https://promisesaplus.com), section by section, as far as
// it applies to a typed Swift API. Not applicable: 2.2.1 (handlers are
// typed, never "not a function"), 2.2.5 (no `this`), 2.3.3.1–2 and 2.3.3.4
// (a Swift `Thenable` has no `then` property to read or to throw).
// `on: nil` deliberately runs handlers inline, as in PromiseKit, so 2.2.4 is
// checked on a queue; QueueTests covers `on: nil`.

@Suite("Promises/A+ 2.1: promise states")
struct PromiseStateTests {
    @Test("2.1.1 a pending promise may become fulfilled")
    func pendingToFulfilled() async throws {
        let (promise, resolver) = Promise<Int>.pending()
        #expect(promise.isPending && !promise.isResolved)
        #expect(promise.value == nil && promise.error == nil && promise.result == nil)
        resolver.fulfill(7)
        #expect(promise.isResolved && promise.isFulfilled && !promise.isRejected && !promise.isPending)
        #expect(promise.value == 7)
        #expect(promise.error == nil)
    }

    @Test("2.1.1 a pending promise may become rejected")
    func pendingToRejected() {
        let (promise, resolver) = Promise<Int>.pending()
        resolver.reject(TestError.first)
        #expect(promise.isResolved && promise.isRejected && !promise.isFulfilled)
        #expect(promise.error as? TestError == .first)
        #expect(promise.value == nil)
    }

    @Test("2.1.2 a fulfilled promise keeps its value: later fulfills and rejects are ignored")
    func fulfilledIsImmutable() async throws {
        let (promise, resolver) = Promise<Int>.pending()
        let seen = Recorder<Int>()
        let done = promise.done(on: nil) { seen.append($0) }
        resolver.fulfill(1)
        resolver.fulfill(2)
        resolver.reject(TestError.first)
        resolver.resolve(.rejected(TestError.second))
        #expect(promise.value == 1)
        #expect(promise.error == nil)
        try await done.fulfilledValue()
        #expect(seen.all == [1])
    }

    @Test("2.1.3 a rejected promise keeps its reason: later rejects and fulfills are ignored")
    func rejectedIsImmutable() async throws {
        let (promise, resolver) = Promise<Int>.pending()
        let seen = Recorder<String>()
        promise.catch(on: nil) { seen.append("\($0)") }
        resolver.reject(TestError.first)
        resolver.reject(TestError.second)
        resolver.fulfill(3)
        #expect(promise.error as? TestError == .first)
        #expect(promise.value == nil)
        #expect(seen.all == ["\(TestError.first)"])
    }

    @Test("sealing twice inside Promise { } keeps the first outcome, even when the body throws after")
    func sealTwiceInBody() {
        let fulfilled = Promise<Int> { seal in
            seal.fulfill(1)
            seal.fulfill(2)
            seal.reject(TestError.first)
            throw TestError.second
        }
        #expect(fulfilled.value == 1)
        let rejected = Promise<Int> { seal in
            seal.reject(TestError.first)
            seal.fulfill(2)
        }
        #expect(rejected.error as? TestError == .first)
    }

    @Test("a guarantee resolves once; the first value wins")
    func guaranteeResolvesOnce() async {
        let (guarantee, resolve) = Guarantee<Int>.pending()
        #expect(guarantee.isPending)
        resolve(1)
        resolve(2)
        #expect(guarantee.value == 1)
        let viaInit = Guarantee<String> { resolve in
            resolve("a")
            resolve("b")
        }
        #expect(viaInit.value == "a")
        #expect(await viaInit.outcome()?.isFulfilled == true)
    }

    @Test("Promise.value, Promise(error:), Promise() and .value are born resolved")
    func bornResolved() {
        #expect(Promise.value(3).value == 3)
        #expect(Promise<Int>(error: TestError.first).error as? TestError == .first)
        #expect(Promise<Void>().isFulfilled)
        #expect(Promise<Void>.value.isFulfilled)
        #expect(Guarantee.value("x").value == "x")
        #expect(Guarantee<Void>().isFulfilled)
        #expect(Guarantee<Void>.value.isResolved)
    }

    @Test("Promise(thenable) resolves as the thenable does")
    func bridgeInit() async throws {
        let (source, resolver) = Promise<Int>.pending()
        let bridged = Promise(source)
        #expect(bridged.isPending)
        resolver.fulfill(5)
        #expect(try await bridged.fulfilledValue() == 5)
        #expect(try await Promise(Guarantee.value(6)).fulfilledValue() == 6)
        let rejected = Promise(Promise<Int>(error: TestError.second))
        #expect(try await rejected.rejection() as? TestError == .second)
    }

    @Test("a throwing Promise { } body rejects")
    func throwingBodyRejects() async throws {
        let promise = Promise<Int> { _ in throw TestError.numbered(4) }
        #expect(try await promise.rejection() as? TestError == .numbered(4))
    }

    @Test("result bridges to and from Swift.Result")
    func resultBridging() throws {
        let fulfilled = Promises.Result<Int>.fulfilled(1)
        #expect(fulfilled.isFulfilled)
        #expect(try fulfilled.asSwiftResult.get() == 1)
        let rejected = Promises.Result<Int>.rejected(TestError.first)
        #expect(!rejected.isFulfilled)
        #expect(throws: TestError.first) { try rejected.asSwiftResult.get() }
        let back = Promises.Result(Swift.Result<Int, TestError>.failure(.second))
        guard case .rejected(let error) = back else {
            Issue.record("expected .rejected, got \(back)")
            return
        }
        #expect(error as? TestError == .second)
        guard case .fulfilled(9) = Promises.Result(Swift.Result<Int, TestError>.success(9)) else {
            Issue.record("expected .fulfilled(9)")
            return
        }
    }
}

@Suite("Promises/A+ 2.2: then")
struct ThenTests {
    @Test("2.2.2 onFulfilled runs after fulfilment, with the value, exactly once")
    func fulfilledHandlerOnce() async throws {
        let queue = QueueTag.queue("2.2.2")
        let (promise, resolver) = Promise<Int>.pending()
        let calls = Recorder<Int>()
        let next = promise.map(on: queue) { value -> Int in
            calls.append(value)
            return value * 10
        }
        await drain(queue)
        #expect(calls.count == 0, "the handler ran before the promise was fulfilled")
        resolver.fulfill(4)
        resolver.fulfill(5)
        #expect(try await next.fulfilledValue() == 40)
        await drain(queue)
        #expect(calls.all == [4])
    }

    @Test("2.2.3 onRejected runs after rejection, with the reason, exactly once")
    func rejectedHandlerOnce() async throws {
        let queue = QueueTag.queue("2.2.3")
        let (promise, resolver) = Promise<Int>.pending()
        let calls = Recorder<String>()
        let recovered = promise.recover(on: queue) { error -> Promise<Int> in
            calls.append("\(error)")
            return .value(-1)
        }
        await drain(queue)
        #expect(calls.count == 0, "the handler ran before the promise was rejected")
        resolver.reject(TestError.first)
        resolver.reject(TestError.second)
        #expect(try await recovered.fulfilledValue() == -1)
        await drain(queue)
        #expect(calls.all == ["\(TestError.first)"])
    }

    @Test("2.2.4 on a queue, a handler never runs before `then` returns, even on a resolved promise")
    func handlersRunAsynchronously() async throws {
        let queue = QueueTag.queue("2.2.4")
        let order = Recorder<String>()
        let resolved = Promise.value(1)
        let rejected = Promise<Int>(error: TestError.first)
        let finished = queue.sync { () -> Promise<Void> in
            let a = resolved.then(on: queue) { _ -> Promise<Int> in
                order.append("then")
                return .value(2)
            }
            let b = rejected.recover(on: queue) { _ -> Promise<Int> in
                order.append("recover")
                return .value(3)
            }
            order.append("returned")
            return when(fulfilled: a.asVoid(), b.asVoid())
        }
        try await finished.fulfilledValue()
        #expect(order.all.first == "returned")
        #expect(Set(order.all) == ["returned", "then", "recover"])
    }

    @Test("2.2.6 handlers on one promise run in the order they were added", arguments: [false, true])
    func handlerOrder(rejects: Bool) async throws {
        let queue = QueueTag.queue("2.2.6")
        let (promise, resolver) = Promise<Int>.pending()
        let order = Recorder<Int>()
        var tails: [Promise<Void>] = []
        for index in 0..<20 {
            if rejects {
                tails.append(
                    promise.recover(on: queue) { _ -> Promise<Int> in
                        order.append(index)
                        return .value(index)
                    }.asVoid())
            } else {
                tails.append(promise.done(on: queue) { _ in order.append(index) })
            }
        }
        if rejects { resolver.reject(TestError.first) } else { resolver.fulfill(0) }
        try await when(fulfilled: tails).fulfilledValue()
        #expect(order.all == Array(0..<20))
    }

    @Test("2.2.6 inline handlers, added before and after resolution, keep their order")
    func inlineHandlerOrder() {
        let (promise, resolver) = Promise<Int>.pending()
        let order = Recorder<Int>()
        for index in 0..<10 {
            _ = promise.done(on: nil) { _ in order.append(index) }
        }
        resolver.fulfill(1)
        #expect(order.all == Array(0..<10))
        for index in 10..<15 {
            _ = promise.done(on: nil) { _ in order.append(index) }
        }
        #expect(order.all == Array(0..<15))
    }

    @Test("2.2.7 then returns a new promise, distinct from the one it was called on")
    func thenReturnsNewPromise() async throws {
        let promise = Promise.value(1)
        let next = promise.then(on: nil) { Promise.value($0 + 1) }
        #expect(next !== promise)
        #expect(try await next.fulfilledValue() == 2)
    }

    @Test("2.2.7.1 a handler's value fulfils the returned promise")
    func handlerValueFulfils() async throws {
        #expect(try await Promise.value(2).map { $0 * 3 }.fulfilledValue() == 6)
        #expect(try await Promise.value(2).then { Promise.value("\($0)") }.fulfilledValue() == "2")
        #expect(try await Promise.value(2).then { Guarantee.value($0 + 1) }.fulfilledValue() == 3)
    }

    @Test("2.2.7.2 a handler that throws rejects the returned promise with that error")
    func throwingHandlerRejects() async throws {
        let source = Promise.value(1)
        let viaThen = source.then { _ -> Promise<Int> in throw TestError.numbered(1) }
        let viaMap = source.map { _ -> Int in throw TestError.numbered(2) }
        let viaCompactMap = source.compactMap { _ -> Int? in throw TestError.numbered(3) }
        let viaDone = source.done { _ in throw TestError.numbered(4) }
        let viaGet = source.get { _ in throw TestError.numbered(5) }
        let viaRecover = Promise<Int>(error: TestError.first).recover { _ -> Promise<Int> in throw TestError.numbered(6)
        }
        #expect(try await viaThen.rejection() as? TestError == .numbered(1))
        #expect(try await viaMap.rejection() as? TestError == .numbered(2))
        #expect(try await viaCompactMap.rejection() as? TestError == .numbered(3))
        #expect(try await viaDone.rejection() as? TestError == .numbered(4))
        #expect(try await viaGet.rejection() as? TestError == .numbered(5))
        #expect(try await viaRecover.rejection() as? TestError == .numbered(6))
    }

    @Test("2.2.7.3 a fulfilled promise passes its value through rejection handlers")
    func valuePassesThroughRejectionHandlers() async throws {
        let called = Counter()
        let source = Promise.value(8)
        let recovered = source.recover { _ -> Promise<Int> in
            called.increment()
            return .value(0)
        }
        #expect(try await recovered.fulfilledValue() == 8)
        let ensured = source.ensure {}
        #expect(try await ensured.fulfilledValue() == 8)
        #expect(called.value == 0)
    }

    @Test("2.2.7.4 a rejection passes through fulfilment handlers, which never run")
    func rejectionPassesThroughFulfilmentHandlers() async throws {
        let called = Counter()
        let source = Promise<Int>(error: TestError.second)
        let end =
            source
            .then { value -> Promise<Int> in
                called.increment()
                return .value(value)
            }
            .map { value -> Int in
                called.increment()
                return value
            }
            .compactMap { value -> Int? in
                called.increment()
                return value
            }
            .get { _ in called.increment() }
            .done { _ in called.increment() }
        #expect(try await end.rejection() as? TestError == .second)
        #expect(called.value == 0)
    }
}
