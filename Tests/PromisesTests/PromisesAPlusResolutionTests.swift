import Dispatch
import Promises
import Testing

// Promises/A+ 2.3, the resolution procedure (2.1 and 2.2: PromisesAPlusTests).

/// A thenable that is neither a `Promise` nor a `Guarantee`: what 2.3.3 calls
/// a "thenable". It resolves when told to, and can be told twice.
final class ForeignThenable<T>: Thenable, @unchecked Sendable {
    // @unchecked Sendable: tests call `settle` from one thread at a time.
    private var handlers: [(Promises.Result<T>) -> Void] = []
    private(set) var result: Promises.Result<T>?

    func pipe(to body: @escaping (Promises.Result<T>) -> Void) {
        if let result { body(result) } else { handlers.append(body) }
    }

    /// Calls every handler with `result`, even when already resolved — a
    /// misbehaving thenable.
    func settle(_ result: Promises.Result<T>) {
        if self.result == nil { self.result = result }
        for handler in handlers { handler(result) }
    }
}

@Suite("Promises/A+ 2.3: the resolution procedure")
struct ResolutionTests {
    @Test("2.3.1 a handler that returns the promise it feeds rejects it with returnedSelf")
    func returnedSelf() async throws {
        let (source, resolver) = Promise<Int>.pending()
        let slot = Recorder<Unchecked<Promise<Int>>>()
        let looped = source.then(on: nil) { _ -> Promise<Int> in
            slot.all[0].value
        }
        slot.append(Unchecked(value: looped))
        resolver.fulfill(1)
        let error = try await looped.rejection()
        guard case PMKError.returnedSelf = error else {
            Issue.record("expected PMKError.returnedSelf, got \(error)")
            return
        }
    }

    @Test("2.3.1 a recover handler that returns the promise it feeds rejects it with returnedSelf")
    func recoverReturnedSelf() async throws {
        let (source, resolver) = Promise<Int>.pending()
        let slot = Recorder<Unchecked<Promise<Int>>>()
        let looped = source.recover(on: nil) { _ -> Promise<Int> in
            slot.all[0].value
        }
        slot.append(Unchecked(value: looped))
        resolver.reject(TestError.first)
        let error = try await looped.rejection()
        guard case PMKError.returnedSelf = error else {
            Issue.record("expected PMKError.returnedSelf, got \(error)")
            return
        }
    }

    @Test("2.3.2 a returned pending promise is adopted: pending until it fulfils, then its value")
    func adoptsPendingThenFulfilled() async throws {
        let (inner, innerResolver) = Promise<String>.pending()
        let outer = Promise.value(1).then(on: nil) { _ in inner }
        #expect(outer.isPending)
        innerResolver.fulfill("inner")
        #expect(try await outer.fulfilledValue() == "inner")
    }

    @Test("2.3.2 a returned promise that rejects rejects with its reason")
    func adoptsRejection() async throws {
        let (inner, innerResolver) = Promise<Int>.pending()
        let outer = Promise.value(1).then(on: nil) { _ in inner }
        #expect(outer.isPending)
        innerResolver.reject(TestError.second)
        #expect(try await outer.rejection() as? TestError == .second)
        let already = Promise.value(1).then { _ in Promise<Int>(error: TestError.first) }
        #expect(try await already.rejection() as? TestError == .first)
    }

    @Test("2.3.2 a returned guarantee is adopted")
    func adoptsGuarantee() async throws {
        let (inner, resolve) = Guarantee<Int>.pending()
        let outer = Promise.value(1).then(on: nil) { _ in inner }
        #expect(outer.isPending)
        resolve(12)
        #expect(try await outer.fulfilledValue() == 12)
    }

    @Test("2.3.3 any Thenable is adopted, and only its first resolution counts")
    func adoptsForeignThenable() async throws {
        let foreign = ForeignThenable<Int>()
        let outer = Promise.value(1).then(on: nil) { _ in foreign }
        #expect(outer.isPending)
        foreign.settle(.fulfilled(1))
        foreign.settle(.rejected(TestError.first))
        #expect(try await outer.fulfilledValue() == 1)

        let rejecting = ForeignThenable<Int>()
        let outer2 = Promise.value(1).then(on: nil) { _ in rejecting }
        rejecting.settle(.rejected(TestError.second))
        rejecting.settle(.fulfilled(2))
        #expect(try await outer2.rejection() as? TestError == .second)
    }

    @Test("2.3.4 a plain value fulfils")
    func plainValueFulfils() async throws {
        let promise = Promise.value("a").map { $0 + "b" }.map { [$0, $0] }
        #expect(try await promise.fulfilledValue() == ["ab", "ab"])
    }

    @Test("adoption chains through several levels of pending promises")
    func nestedAdoption() async throws {
        let (innermost, resolver) = Promise<Int>.pending()
        let outer = Promise.value(0).then { _ in
            Promise.value(0).then { _ in
                Promise.value(0).then { _ in innermost }
            }
        }
        resolver.fulfill(99)
        #expect(try await outer.fulfilledValue() == 99)
    }
}
