import Dispatch
import Promises
import Testing

@Suite("Bridging: wait(), async() and DispatchQueue.async(.promise)")
struct BridgingTests {
    @Test("Promise.wait() returns the value or throws the error, resolved or pending")
    func promiseWait() throws {
        #expect(try Promise.value(1).wait() == 1)
        #expect(throws: TestError.first) { try Promise<Int>(error: TestError.first).wait() }
        let (pending, resolver) = Promise<Int>.pending()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { resolver.fulfill(2) }
        #expect(try pending.map { $0 * 10 }.wait() == 20)
        let (failing, failer) = Promise<Int>.pending()
        DispatchQueue.global().async { failer.reject(TestError.second) }
        #expect(throws: TestError.second) { try failing.wait() }
    }

    @Test("Guarantee.wait() returns the value, resolved or pending")
    func guaranteeWait() {
        #expect(Guarantee.value("g").wait() == "g")
        #expect(after(seconds: 0.005).map { "late" }.wait() == "late")
    }

    @Test("Promise.async() returns the value or throws the error")
    func promiseAsync() async throws {
        #expect(try await Promise.value(3).async() == 3)
        let (pending, resolver) = Promise<String>.pending()
        DispatchQueue.global().async { resolver.fulfill("later") }
        #expect(try await pending.async() == "later")
        await #expect(throws: TestError.numbered(4)) {
            try await Promise.value(0).map { _ -> Int in throw TestError.numbered(4) }.async()
        }
    }

    @Test("Guarantee.async() returns the value")
    func guaranteeAsync() async {
        #expect(await Guarantee.value(5).async() == 5)
        #expect(await after(.milliseconds(2)).map { 6 }.async() == 6)
    }

    @Test("async() works from many tasks at once")
    func manyAwaiters() async throws {
        let (shared, resolver) = Promise<Int>.pending()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await shared.async() }
            }
            DispatchQueue.global().async { resolver.fulfill(9) }
            var total = 0
            for try await value in group { total += value }
            #expect(total == 450)
        }
    }

    @Test("DispatchQueue.async(.promise) runs the body on that queue; a non-throwing body gives a Guarantee")
    func dispatchAsyncGuarantee() async {
        let queue = QueueTag.queue("async-promise")
        let guarantee = queue.async(.promise) { QueueTag.current }
        #expect(type(of: guarantee) == Guarantee<String?>.self)
        #expect(await guarantee.async() == "async-promise")
    }

    @Test("DispatchQueue.async(.promise) with a throwing body gives a Promise; a throw rejects")
    func dispatchAsyncPromise() async throws {
        // A local function would do in PromiseKit, but Swift 6 treats every
        // closure given to a DispatchQueue method named `async` as @Sendable.
        @Sendable func compute(_ fail: Bool) throws -> Int {
            if fail { throw TestError.numbered(7) }
            return 7
        }
        let fulfilled = DispatchQueue.global().async(.promise) { try compute(false) }
        #expect(type(of: fulfilled) == Promise<Int>.self)
        #expect(try await fulfilled.async() == 7)
        let rejected = DispatchQueue.global().async(.promise) { try compute(true) }
        await #expect(throws: TestError.numbered(7)) { try await rejected.async() }
    }

    @Test("DispatchQueue.async(.promise) joins the given group")
    func dispatchAsyncGroup() async {
        let group = DispatchGroup()
        let ran = Counter()
        _ = DispatchQueue.global().async(.promise, group: group) { ran.increment() }
        await awaitHandOff { resume in
            group.notify(queue: .global()) { resume(()) }
        }
        #expect(ran.value == 1)
    }
}
