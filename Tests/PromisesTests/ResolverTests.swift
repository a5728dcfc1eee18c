import Dispatch
import Promises
import Testing

@Suite("Resolver: every way to settle a promise")
struct ResolverTests {
    /// A pending promise, settled by `body` through its resolver.
    func settled<T>(_ type: T.Type = T.self, _ body: (Resolver<T>) -> Void) -> Promise<T> {
        let (promise, resolver) = Promise<T>.pending()
        body(resolver)
        return promise
    }

    @Test("fulfill and reject")
    func fulfillAndReject() async throws {
        #expect(try await settled(Int.self) { $0.fulfill(1) }.fulfilledValue() == 1)
        #expect(try await settled(Int.self) { $0.reject(TestError.first) }.rejection() as? TestError == .first)
    }

    @Test("resolve(Result)")
    func resolveResult() async throws {
        #expect(try await settled(Int.self) { $0.resolve(.fulfilled(2)) }.fulfilledValue() == 2)
        #expect(
            try await settled(Int.self) { $0.resolve(.rejected(TestError.second)) }.rejection() as? TestError == .second
        )
    }

    @Test("resolve(T?, Error?): value, error, error wins over value, (nil, nil) is invalidCallingConvention")
    func resolveOptionalValueAndError() async throws {
        let value: Int? = 3
        let noValue: Int? = nil
        let error: (any Error)? = TestError.first
        let noError: (any Error)? = nil
        #expect(try await settled(Int.self) { $0.resolve(value, noError) }.fulfilledValue() == 3)
        #expect(try await settled(Int.self) { $0.resolve(noValue, error) }.rejection() as? TestError == .first)
        #expect(try await settled(Int.self) { $0.resolve(value, error) }.rejection() as? TestError == .first)
        let invalid = try await settled(Int.self) { $0.resolve(noValue, noError) }.rejection()
        guard case PMKError.invalidCallingConvention = invalid else {
            Issue.record("expected invalidCallingConvention, got \(invalid)")
            return
        }
    }

    @Test("resolve(T, Error?): fulfils unless there is an error")
    func resolveValueAndError() async throws {
        #expect(try await settled(Int.self) { $0.resolve(4, nil) }.fulfilledValue() == 4)
        #expect(try await settled(Int.self) { $0.resolve(4, TestError.second) }.rejection() as? TestError == .second)
    }

    @Test("resolve(Error?, T?): the error-first completion-handler order")
    func resolveErrorFirst() async throws {
        let noError: (any Error)? = nil
        let value: Int? = 5
        let noValue: Int? = nil
        #expect(try await settled(Int.self) { $0.resolve(noError, value) }.fulfilledValue() == 5)
        #expect(try await settled(Int.self) { $0.resolve(TestError.first, value) }.rejection() as? TestError == .first)
        let invalid = try await settled(Int.self) { $0.resolve(noError, noValue) }.rejection()
        guard case PMKError.invalidCallingConvention = invalid else {
            Issue.record("expected invalidCallingConvention, got \(invalid)")
            return
        }
    }

    @Test("resolve(Swift.Result)")
    func resolveSwiftResult() async throws {
        let success = Swift.Result<Int, TestError>.success(6)
        let failure = Swift.Result<Int, TestError>.failure(.numbered(6))
        let anyFailure = Swift.Result<Int, any Error>.failure(TestError.second)
        #expect(try await settled(Int.self) { $0.resolve(success) }.fulfilledValue() == 6)
        #expect(try await settled(Int.self) { $0.resolve(failure) }.rejection() as? TestError == .numbered(6))
        #expect(try await settled(Int.self) { $0.resolve(anyFailure) }.rejection() as? TestError == .second)
    }

    @Test("Void conveniences: fulfill_(), resolve(nil), resolve(error)")
    func voidConveniences() async throws {
        try await settled(Void.self) { $0.fulfill_() }.fulfilledValue()
        try await settled(Void.self) { $0.resolve(nil) }.fulfilledValue()
        #expect(try await settled(Void.self) { $0.resolve(TestError.first) }.rejection() as? TestError == .first)
        let voidPromise = Promise<Void> { seal in seal.fulfill_() }
        try await voidPromise.fulfilledValue()
    }

    @Test("a completion handler that calls back later settles the promise then")
    func completionHandlerStyle() async throws {
        func legacy(_ input: Int, completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {
            DispatchQueueHop.later {
                if input < 0 { completion(nil, TestError.numbered(input)) } else { completion(input * 2, nil) }
            }
        }
        func wrapped(_ input: Int) -> Promise<Int> {
            Promise { seal in legacy(input) { seal.resolve($0, $1) } }
        }
        #expect(try await wrapped(21).fulfilledValue() == 42)
        #expect(try await wrapped(-1).rejection() as? TestError == .numbered(-1))
    }

    @Test("the first settlement wins whatever the overload")
    func firstWins() async throws {
        let promise = settled(Int.self) { resolver in
            resolver.resolve(1, nil)
            resolver.resolve(nil, TestError.first)
            resolver.resolve(.rejected(TestError.second))
            resolver.resolve(Swift.Result<Int, TestError>.failure(.first))
            resolver.reject(TestError.second)
        }
        #expect(try await promise.fulfilledValue() == 1)
    }
}

/// Calls back on another thread, as a callback API would.
enum DispatchQueueHop {
    static func later(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async(execute: body)
    }
}
