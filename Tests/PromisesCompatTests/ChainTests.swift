import Dispatch
import Foundation
import PromiseKit
import Testing

@Suite("Chains as PromiseKit clients write them")
struct ChainTests {
    @Test("firstly / then / map / get / done / catch / finally")
    func typicalChain() {
        let service = Service()
        let log = Log()
        let (finished, finish) = Guarantee<Void>.pending()
        firstly {
            service.load(1)
        }.then { value in
            service.load(value)
        }.map { value in
            value + 1
        }.get { value in
            log.append("get \(value)")
        }.done { value in
            log.append("done \(value)")
        }.catch { error in
            log.append("catch \(error)")
        }.finally {
            log.append("finally")
            finish(())
        }
        finished.wait()
        #expect(log.all == ["get 5", "done 5", "finally"])
    }

    @Test("a rejection skips then and done and reaches catch")
    func errorsReachCatch() {
        let service = Service()
        let log = Log()
        let (finished, finish) = Guarantee<Void>.pending()
        service.load(-1).then { value in
            service.load(value)
        }.done { value in
            log.append("done \(value)")
        }.catch { error in
            log.append("catch \(error)")
        }.finally {
            finish(())
        }
        finished.wait()
        #expect(log.all == ["catch notFound"])
    }

    @Test("Promise<Void> and Guarantee chains, ensure, when of two Void promises")
    func voidPromisesAndGuarantees() throws {
        let service = Service()
        let model = ViewModel()
        let titled = service.ping().then {
            service.title()
        }.done { title in
            model.title = title
        }.ensure {
            model.events.append("ensure")
        }
        try titled.wait()
        #expect(model.title == "Title")
        #expect(model.events == ["ensure"])
        let both: Promise<Void> = when(fulfilled: service.ping(), service.ping())
        try both.wait()
    }

    @Test("pending() and the completion-handler forms of resolve")
    func pendingAndCompletionHandlerResolve() throws {
        let (promise, resolver) = Promise<Int>.pending()
        let pending = Promise<String>.pending()
        DispatchQueue.global().async {
            let value: Int? = 7
            let error: Error? = nil
            resolver.resolve(value, error)
            pending.resolver.resolve(nil, FetchError.offline)
        }
        #expect(try promise.wait() == 7)
        #expect(throws: FetchError.offline) { try pending.promise.wait() }

        let both = Promise<Int>.pending()
        let noValue: Int? = nil
        let noError: Error? = nil
        both.resolver.resolve(noValue, noError)
        #expect(throws: PMKError.self) { try both.promise.wait() }
        let viaResult = Promise<Int> { seal in
            seal.resolve(Swift.Result<Int, Error>.success(3))
        }
        #expect(viaResult.value == 3)
        let viaOwnResult = Promise<Int> { seal in seal.resolve(.fulfilled(4)) }
        #expect(viaOwnResult.value == 4)
        let errorFirst = Promise<Int> { seal in seal.resolve(nil, 5) }
        #expect(errorFirst.value == 5)
    }

    @Test("when of tuples, of an array; race")
    func whenTuplesAndRace() throws {
        let service = Service()
        let (a, b) = try when(fulfilled: service.load(1), Promise.value("b")).wait()
        #expect(a == 2)
        #expect(b == "b")
        let (x, y, z) = try when(fulfilled: service.load(1), service.load(2), Promise.value(true)).wait()
        #expect(x == 2 && y == 4)
        #expect(z)
        let (p, q, r, s, t) = try when(
            fulfilled: service.load(1), service.load(2), service.load(3), service.load(4), Guarantee.value(5)
        ).wait()
        #expect(p == 2 && q == 4 && r == 6 && s == 8 && t == 5)

        let (never, resolveNever) = Promise<Int>.pending()
        let first = try race(service.load(5), never).wait()
        #expect(first == 10)
        resolveNever.fulfill(0)

        let values: [Int] = try when(fulfilled: [service.load(1), service.load(2), service.load(3)]).wait()
        #expect(values == [2, 4, 6])
        let winner = try race(fulfilled: [service.load(-1), service.load(4)]).wait()
        #expect(winner == 8)
    }

    @Test("after, and DispatchQueue.async(.promise) for a Guarantee and a Promise")
    func afterAndDispatchQueueAsyncPromise() {
        after(seconds: 0.01).wait()
        after(.milliseconds(1)).wait()
        let computed: Guarantee<Int> = DispatchQueue.global().async(.promise) {
            40 + 2
        }
        #expect(computed.wait() == 42)
        let thrown = DispatchQueue.global().async(.promise) { () throws -> Int in
            throw FetchError.offline
        }
        #expect(throws: FetchError.offline) { try thrown.wait() }
    }

    @Test("recover to a Guarantee, recover that rethrows, recover of a Void chain")
    func recoverForms() throws {
        let service = Service()
        let recovered: Guarantee<Int> = service.load(-1).recover { _ in Guarantee.value(0) }
        #expect(recovered.wait() == 0)

        let rethrowing = service.load(-1).recover { error -> Promise<Int> in
            guard case FetchError.notFound = error else { throw error }
            return .value(99)
        }
        #expect(try rethrowing.wait() == 99)

        let log = Log()
        let voidRecovered: Guarantee<Void> = Promise<Void>(error: FetchError.offline).recover { error in
            log.append("\(error)")
        }
        voidRecovered.wait()
        #expect(log.all == ["offline"])
    }

    @Test("result, value, error and the is… properties")
    func resultAndStateProperties() throws {
        let promise = Promise.value(3)
        switch promise.result {
        case .fulfilled(let value)?: #expect(value == 3)
        case .rejected?, nil: Issue.record("expected a value")
        }
        #expect(promise.isFulfilled && promise.isResolved && !promise.isPending && !promise.isRejected)
        let failed = Promise<Int>(error: FetchError.offline)
        #expect(failed.isRejected)
        #expect(failed.error != nil)
        let log = Log()
        try promise.tap { result in
            log.append("\(result)")
        }.asVoid().wait()
        #expect(log.all == ["fulfilled(3)"])
        #expect(Result<Int>.fulfilled(1).isFulfilled)
    }

    @Test("compactMap: nil rejects with PMKError.compactMap")
    func compactMap() throws {
        #expect(try Promise.value("12").compactMap { Int($0) }.wait() == 12)
        #expect {
            try Promise.value("twelve").compactMap { Int($0) }.wait()
        } throws: { error in
            if case PMKError.compactMap(let value as String, let type) = error {
                return value == "twelve" && type == Int.self
            }
            return false
        }
    }

    @Test("the sequence helpers on promises")
    func sequenceHelpers() throws {
        let sorted = try Promise.value([3, 1, 2]).mapValues { $0 * 2 }.sortedValues().wait()
        #expect(sorted == [2, 4, 6])
        let first = try Promise.value([1, 2, 3]).filterValues { $0 > 1 }.firstValue.wait()
        #expect(first == 2)
        let loaded = try Promise.value([1, 2]).thenMap { Service().load($0) }.wait()
        #expect(loaded == [2, 4])
        let flat = try Promise.value([1, 2]).thenFlatMap { Promise.value([$0, 0]) }.wait()
        #expect(flat == [1, 0, 2, 0])
        #expect(try Promise.value(["1", "x"]).compactMapValues { Int($0) }.wait() == [1])
        #expect(try Promise.value([1, 2]).flatMapValues { [$0, $0] }.wait() == [1, 1, 2, 2])
        #expect(try Promise.value([1, 2, 3]).firstValue(where: { $0 > 1 }).wait() == 2)
        #expect(try Promise.value([1, 2, 3]).lastValue.wait() == 3)
        #expect(throws: PMKError.self) { try Promise.value([Int]()).firstValue.wait() }
    }

    @Test("the sequence helpers on guarantees stay guarantees")
    func guaranteeSequenceHelpers() {
        let numbers = Guarantee.value([3, 1, 2])
        let doubled: Guarantee<[Int]> = numbers.mapValues { $0 * 2 }
        let sorted: Guarantee<[Int]> = numbers.sortedValues()
        let descending: Guarantee<[Int]> = numbers.sortedValues { $0 > $1 }
        let odd: Guarantee<[Int]> = numbers.filterValues { $0 % 2 == 1 }
        let some: Guarantee<[Int]> = numbers.compactMapValues { $0 == 2 ? nil : $0 }
        let flat: Guarantee<[Int]> = numbers.flatMapValues { [$0, $0] }
        let later: Guarantee<[Int]> = numbers.thenMap { Guarantee.value($0 + 10) }
        let flatLater: Guarantee<[Int]> = numbers.thenFlatMap { Guarantee.value([$0, 0]) }
        #expect(doubled.wait() == [6, 2, 4])
        #expect(sorted.wait() == [1, 2, 3])
        #expect(descending.wait() == [3, 2, 1])
        #expect(odd.wait() == [3, 1])
        #expect(some.wait() == [3, 1])
        #expect(flat.wait() == [3, 3, 1, 1, 2, 2])
        #expect(later.wait() == [13, 11, 12])
        #expect(flatLater.wait() == [3, 0, 1, 0, 2, 0])
    }

    @Test("async() bridges a promise and a guarantee to Swift concurrency")
    func asyncBridges() async throws {
        #expect(try await Service().load(3).async() == 6)
        #expect(await Service().title().async() == "Title")
        await #expect(throws: FetchError.notFound) { try await Service().load(-1).async() }
    }
}
