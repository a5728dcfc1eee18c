import Dispatch
import Promises
import Testing

@Suite("after and firstly")
struct AfterFirstlyTests {
    /// Nanoseconds on the clock Dispatch's deadlines use.
    func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    @Test("after(seconds:) resolves no earlier than asked", arguments: [0.02, 0.1])
    func afterSeconds(_ seconds: Double) async {
        let start = now()
        let timer = after(seconds: seconds)
        #expect(timer.isPending)
        #expect(await timer.outcome()?.isFulfilled == true)
        #expect(now() - start >= UInt64(seconds * 1_000_000_000))
    }

    @Test("after(_: DispatchTimeInterval) resolves no earlier than asked")
    func afterInterval() async {
        let start = now()
        #expect(await after(.milliseconds(30)).outcome()?.isFulfilled == true)
        #expect(now() - start >= 30_000_000)
    }

    @Test("after with zero or a negative interval resolves")
    func afterNothing() async {
        #expect(await after(seconds: 0).outcome()?.isFulfilled == true)
        #expect(await after(seconds: -1).outcome()?.isFulfilled == true)
    }

    @Test("after(seconds:) with an infinite or huge interval does not crash")
    func afterHugeInterval() async {
        await #expect(processExitsWith: .success) {
            _ = after(seconds: .infinity)
            _ = after(seconds: 1e12)
            _ = after(seconds: .nan)
            _ = after(seconds: -.infinity)
        }
    }

    @Test("firstly starts a chain with the promise its body returns, running the body at once")
    func firstlyPromise() async throws {
        let ran = Counter()
        let chain = firstly { () -> Promise<Int> in
            ran.increment()
            return .value(3)
        }.map { $0 * 2 }
        #expect(ran.value == 1)
        #expect(try await chain.fulfilledValue() == 6)
        let (pending, resolver) = Promise<String>.pending()
        let adopted = firstly { pending }
        #expect(adopted.isPending)
        resolver.fulfill("late")
        #expect(try await adopted.fulfilledValue() == "late")
    }

    @Test("a throwing firstly body rejects; a rejected promise from it rejects")
    func firstlyThrows() async throws {
        let thrown = firstly { () throws -> Promise<Int> in throw TestError.numbered(8) }
        #expect(try await thrown.rejection() as? TestError == .numbered(8))
        let returned = firstly { Promise<Int>(error: TestError.first) }
        #expect(try await returned.rejection() as? TestError == .first)
    }

    @Test("firstly with a guarantee body gives a Guarantee")
    func firstlyGuarantee() async {
        let guarantee: Guarantee<Int> = firstly { Guarantee.value(4) }
        _ = await guarantee.outcome()
        #expect(guarantee.value == 4)
        let mapped: Guarantee<Int> = firstly { after(seconds: 0).map { 5 } }
        _ = await mapped.outcome()
        #expect(mapped.value == 5)
    }
}
