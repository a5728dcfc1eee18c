import Dispatch
import Foundation
import Promises
import Testing

@Suite("Errors: propagation, recover, ensure, catch, finally")
struct CatchTests {
    @Test("a rejection skips every fulfilment handler and reaches catch with the original error")
    func propagationToCatch() async throws {
        let skipped = Counter()
        let caught = Recorder<String>()
        let (ended, end) = Guarantee<Void>.pending()
        firstly {
            Promise<Int>(error: TestError.numbered(11))
        }.then { value -> Promise<Int> in
            skipped.increment()
            return .value(value)
        }.map { value -> Int in
            skipped.increment()
            return value
        }.done { _ in
            skipped.increment()
        }.catch { error in
            caught.append("\(error)")
        }.finally {
            end(())
        }
        _ = await ended.outcome()
        #expect(skipped.value == 0)
        #expect(caught.all == ["\(TestError.numbered(11))"])
    }

    @Test("catch is not called for a fulfilled chain, and finally still runs")
    func noCatchWhenFulfilled() async {
        let caught = Counter()
        let (ended, end) = Guarantee<Void>.pending()
        Promise.value(1).done { _ in }.catch { _ in caught.increment() }.finally { end(()) }
        _ = await ended.outcome()
        #expect(caught.value == 0)
    }

    @Test("finally runs after the catch body")
    func finallyAfterCatch() async {
        let order = Recorder<String>()
        let (ended, end) = Guarantee<Void>.pending()
        let slow = QueueTag.queue("slow-catch")
        Promise<Int>(error: TestError.first)
            .catch(on: slow) { _ in
                Thread.sleep(forTimeInterval: 0.01)
                order.append("catch")
            }
            .finally(on: nil) {
                order.append("finally")
                end(())
            }
        _ = await ended.outcome()
        #expect(order.all == ["catch", "finally"])
    }

    @Test("recover → Promise turns a rejection into a value and passes a value through")
    func recoverToPromise() async throws {
        let recovered = Promise<Int>(error: TestError.first).recover { error -> Promise<Int> in
            guard error as? TestError == .first else { throw error }
            return .value(5)
        }
        #expect(try await recovered.fulfilledValue() == 5)
        let untouched = Promise.value(3).recover { _ in Promise.value(0) }
        #expect(try await untouched.fulfilledValue() == 3)
    }

    @Test("recover → Promise can rethrow, or return a rejected promise, to reject with a new error")
    func recoverRejectsAgain() async throws {
        let rethrown = Promise<Int>(error: TestError.first).recover { _ -> Promise<Int> in throw TestError.second }
        #expect(try await rethrown.rejection() as? TestError == .second)
        let returned = Promise<Int>(error: TestError.first).recover { _ in Promise<Int>(error: TestError.numbered(2)) }
        #expect(try await returned.rejection() as? TestError == .numbered(2))
        let (inner, innerResolver) = Promise<Int>.pending()
        let adopted = Promise<Int>(error: TestError.first).recover(on: nil) { _ in inner }
        #expect(adopted.isPending)
        innerResolver.fulfill(8)
        #expect(try await adopted.fulfilledValue() == 8)
    }

    @Test("recover → Guarantee handles every error, cancellation included, and cannot fail after")
    func recoverToGuarantee() async {
        let errors: [any Error] = [TestError.first, PMKError.cancelled, ClientCancelled()]
        for error in errors {
            let seen = Recorder<String>()
            let guarantee: Guarantee<Int> = Promise<Int>(error: error).recover { error in
                seen.append("\(error)")
                return Guarantee.value(42)
            }
            #expect(await guarantee.outcome()?.isFulfilled == true)
            #expect(guarantee.value == 42)
            #expect(seen.all == ["\(error)"])
        }
        let passed: Guarantee<Int> = Promise.value(7).recover { _ in Guarantee.value(0) }
        _ = await passed.outcome()
        #expect(passed.value == 7)
    }

    @Test("Promise<Void>.recover { } (non-throwing) handles every error and returns a Guarantee<Void>")
    func voidRecoverToGuarantee() async {
        for error in [TestError.first, PMKError.cancelled] as [any Error] {
            let seen = Counter()
            let guarantee: Guarantee<Void> = Promise<Void>(error: error).recover { _ in seen.increment() }
            #expect(await guarantee.outcome()?.isFulfilled == true)
            #expect(seen.value == 1)
        }
        let untouched = Counter()
        let fine: Guarantee<Void> = Promise<Void>.value.recover { _ in untouched.increment() }
        _ = await fine.outcome()
        #expect(untouched.value == 0)
    }

    @Test("Promise<Void>.recover { } throws → Promise<Void>: a throw rejects, the policy picks errors")
    func voidRecoverThrowing() async throws {
        let handled: Promise<Void> = Promise<Void>(error: TestError.first).recover(policy: .allErrors) { _ in }
        try await handled.fulfilledValue()
        let rethrown: Promise<Void> = Promise<Void>(error: TestError.first).recover(policy: .allErrors) { _ in
            throw TestError.second
        }
        #expect(try await rethrown.rejection() as? TestError == .second)
        let called = Counter()
        let skipped: Promise<Void> = Promise<Void>(error: PMKError.cancelled).recover(
            policy: .allErrorsExceptCancellation
        ) { _ in
            called.increment()
        }
        #expect(try await skipped.rejection().isCancelled)
        #expect(called.value == 0)
        let cancelledHandled: Promise<Void> = Promise<Void>(error: PMKError.cancelled).recover(policy: .allErrors) {
            _ in
            called.increment()
        }
        try await cancelledHandled.fulfilledValue()
        #expect(called.value == 1)
    }

    @Test("recover → Promise with an explicit policy: cancellation passes through unless .allErrors")
    func recoverPolicy() async throws {
        let called = Counter()
        let passedThrough = Promise<Int>(error: ClientCancelled()).recover(policy: .allErrorsExceptCancellation) {
            _ -> Promise<Int> in
            called.increment()
            return .value(1)
        }
        #expect(try await passedThrough.rejection() is ClientCancelled)
        #expect(called.value == 0)
        let handled = Promise<Int>(error: ClientCancelled()).recover(policy: .allErrors) { _ -> Promise<Int> in
            called.increment()
            return .value(1)
        }
        #expect(try await handled.fulfilledValue() == 1)
        #expect(called.value == 1)
    }

    @Test("catch with an explicit policy", arguments: [CatchPolicy.allErrors, .allErrorsExceptCancellation])
    func catchPolicy(_ policy: CatchPolicy) async {
        let cases: [(error: any Error, cancels: Bool)] = [
            (TestError.first, false), (PMKError.cancelled, true), (ClientCancelled(), true),
            (ClientFailure(), false), (PMKError.badInput, false),
        ]
        for (error, cancels) in cases {
            let caught = Counter()
            let (ended, end) = Guarantee<Void>.pending()
            Promise<Int>(error: error).catch(policy: policy) { _ in caught.increment() }.finally { end(()) }
            _ = await ended.outcome()
            let expected = policy == .allErrors || !cancels ? 1 : 0
            #expect(caught.value == expected, "\(error) under \(policy)")
        }
    }

    @Test("isCancelled: PMKError.cancelled, CancellableError, CocoaError.userCancelled, URLError.cancelled")
    func isCancelled() {
        #expect(PMKError.cancelled.isCancelled)
        #expect((PMKError.cancelled as any Error).isCancelled)
        #expect(!(PMKError.badInput as any Error).isCancelled)
        #expect((ClientCancelled() as any Error).isCancelled)
        #expect(!(ClientFailure() as any Error).isCancelled)
        #expect(!(TestError.first as any Error).isCancelled)
        #expect((CocoaError(.userCancelled) as any Error).isCancelled)
        #expect(!(CocoaError(.fileNoSuchFile) as any Error).isCancelled)
        #expect((URLError(.cancelled) as any Error).isCancelled)
        #expect(!(URLError(.timedOut) as any Error).isCancelled)
    }

    @Test("ensure runs whatever the outcome, before what follows, and passes the outcome on")
    func ensure() async throws {
        let order = Recorder<String>()
        let fulfilled = Promise.value(1)
            .ensure { order.append("ensure") }
            .map { value -> Int in
                order.append("map")
                return value
            }
        #expect(try await fulfilled.fulfilledValue() == 1)
        #expect(order.all == ["ensure", "map"])

        let ran = Counter()
        let rejected = Promise<Int>(error: TestError.second).ensure { ran.increment() }
        #expect(try await rejected.rejection() as? TestError == .second)
        #expect(ran.value == 1)
    }

    @Test("ensureThen waits for the guarantee it returns before passing the outcome on")
    func ensureThen() async throws {
        let (gate, open) = Guarantee<Void>.pending()
        let ran = Counter()
        let (source, resolver) = Promise<Int>.pending()
        let after = source.ensureThen(on: nil) { () -> Guarantee<Void> in
            ran.increment()
            return gate
        }
        resolver.fulfill(3)
        #expect(ran.value == 1)
        #expect(after.isPending, "ensureThen passed the outcome on before its guarantee resolved")
        open(())
        #expect(try await after.fulfilledValue() == 3)

        let rejected = Promise<Int>(error: TestError.first).ensureThen { Guarantee.value }
        #expect(try await rejected.rejection() as? TestError == .first)
    }

    @Test("compactMap: nil rejects with PMKError.compactMap carrying the value and type")
    func compactMapNil() async throws {
        let error = try await Promise.value("x").compactMap { Int($0) }.rejection()
        guard case PMKError.compactMap(let value, let type) = error else {
            Issue.record("expected PMKError.compactMap, got \(error)")
            return
        }
        #expect(value as? String == "x")
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(try await Promise.value("12").compactMap { Int($0) }.fulfilledValue() == 12)
    }

    @Test("get sees the value and passes it on; tap sees the result, fulfilled or rejected, and passes it on")
    func getAndTap() async throws {
        let seen = Recorder<String>()
        let got = Promise.value(4).get { seen.append("get \($0)") }.map { $0 + 1 }
        #expect(try await got.fulfilledValue() == 5)
        let tappedValue = Promise.value(6).tap { seen.append("tap \($0.isFulfilled)") }
        #expect(try await tappedValue.fulfilledValue() == 6)
        let tappedError = Promise<Int>(error: TestError.first).tap { seen.append("tap \($0.isFulfilled)") }
        #expect(try await tappedError.rejection() as? TestError == .first)
        #expect(seen.all == ["get 4", "tap true", "tap false"])
    }

    @Test("asVoid keeps the outcome and drops the value")
    func asVoid() async throws {
        let fulfilled: Promise<Void> = Promise.value(3).asVoid()
        try await fulfilled.fulfilledValue()
        let rejected: Promise<Void> = Promise<Int>(error: TestError.first).asVoid()
        #expect(try await rejected.rejection() as? TestError == .first)
        let guaranteed: Guarantee<Void> = Guarantee.value(1).asVoid()
        #expect(await guaranteed.outcome()?.isFulfilled == true)
    }

    @Test("PMKError cases describe themselves")
    func errorDescriptions() {
        let cases: [PMKError] = [
            .invalidCallingConvention, .returnedSelf, .badInput, .cancelled,
            .compactMap(1, String.self), .emptySequence, .noWinner,
        ]
        let descriptions = cases.map(\.debugDescription)
        #expect(Set(descriptions).count == cases.count)
        #expect(descriptions.allSatisfy { !$0.isEmpty })
        #expect(PMKError.compactMap(1, String.self).localizedDescription.contains("String"))
    }
}

/// Runs `body` with `handler` as `conf.logHandler`, then puts the old one back.
func withLogHandler<R>(
    _ handler: @escaping @Sendable (LogEvent) -> Void, _ body: () async throws -> R
) async rethrows -> R {
    let saved = conf.logHandler
    conf.logHandler = handler
    defer { conf.logHandler = saved }
    return try await body()
}

extension GlobalConfiguration {
    @Suite("Errors: the default catch policy and cauterize")
    struct CatchPolicyDefaultTests {
        @Test("the default policy is .allErrorsExceptCancellation")
        func defaultPolicy() {
            #expect(conf.catchPolicy == .allErrorsExceptCancellation)
        }

        @Test("by default catch and recover skip cancellation; conf.catchPolicy = .allErrors includes it")
        func policyFromConf() async throws {
            let caught = Counter()
            for error in [PMKError.cancelled, ClientCancelled()] as [any Error] {
                let (ended, end) = Guarantee<Void>.pending()
                Promise<Int>(error: error).catch { _ in caught.increment() }.finally { end(()) }
                _ = await ended.outcome()
                let passed = Promise<Int>(error: error).recover { _ in Promise.value(1) }
                #expect(try await passed.rejection().isCancelled)
            }
            #expect(caught.value == 0)

            let saved = conf.catchPolicy
            conf.catchPolicy = .allErrors
            defer { conf.catchPolicy = saved }
            let (ended, end) = Guarantee<Void>.pending()
            Promise<Int>(error: PMKError.cancelled).catch { _ in caught.increment() }.finally { end(()) }
            _ = await ended.outcome()
            #expect(caught.value == 1)
            let recovered = Promise<Int>(error: PMKError.cancelled).recover { _ in Promise.value(1) }
            #expect(try await recovered.fulfilledValue() == 1)
        }

        @Test("cauterize logs each swallowed error as .cauterized, and nothing for a fulfilled chain")
        func cauterize() async {
            let marker = TestError.numbered(Int.random(in: 1...1_000_000))
            let logged = Recorder<String>()
            let (ended, resolve) = Guarantee<Void>.pending()
            let end = Unchecked(value: resolve)
            await withLogHandler({ event in
                // Records every cauterized error: no other suite cauterizes.
                guard case .cauterized(let error) = event else { return }
                logged.append("\(error)")
                if error as? TestError == marker { end.value(()) }
            }) {
                Promise.value(1).done { _ in }.cauterize()
                Promise<Int>(error: marker).done { _ in }.cauterize()
                _ = await ended.outcome()
            }
            #expect(logged.all == ["\(marker)"])
        }

        @Test("cauterize then finally: finally runs after the error is logged")
        func cauterizeFinally() async {
            let order = Recorder<String>()
            let marker = TestError.numbered(-Int.random(in: 1...1_000_000))
            let (ended, end) = Guarantee<Void>.pending()
            await withLogHandler({ event in
                if case .cauterized(let error) = event, error as? TestError == marker { order.append("logged") }
            }) {
                Promise<Int>(error: marker).cauterize().finally {
                    order.append("finally")
                    end(())
                }
                _ = await ended.outcome()
            }
            #expect(order.all == ["logged", "finally"])
        }
    }
}
