import Dispatch
import Foundation
import Promises
import Testing

// PromiseKit 8.2.0 overflows the stack on these (its issue #1047): sealing
// the root runs each inline handler from inside the previous one.

let hops = 100_000

@Suite("Deep chains")
struct DeepChainTests {
    @Test("100,000 map(on: nil) hops on a pending promise, then fulfilled")
    func inlineMaps() async throws {
        let (root, resolver) = Promise<Int>.pending()
        var tail = root
        for _ in 0..<hops { tail = tail.map(on: nil) { $0 + 1 } }
        resolver.fulfill(0)
        #expect(try await tail.fulfilledValue() == hops)
    }

    @Test("100,000 map(on: nil) hops on a pending promise, then rejected: the error reaches the end")
    func inlineMapsRejected() async throws {
        let (root, resolver) = Promise<Int>.pending()
        let ran = Counter()
        var tail = root
        for _ in 0..<hops {
            tail = tail.map(on: nil) { value in
                ran.increment()
                return value
            }
        }
        resolver.reject(TestError.numbered(hops))
        #expect(try await tail.rejection() as? TestError == .numbered(hops))
        #expect(ran.value == 0)
    }

    @Test("100,000 then(on: nil) hops returning Promise.value")
    func inlineThens() async throws {
        let (root, resolver) = Promise<Int>.pending()
        var tail = root
        for _ in 0..<hops { tail = tail.then(on: nil) { Promise.value($0 + 1) } }
        resolver.fulfill(0)
        #expect(try await tail.fulfilledValue() == hops)
    }

    @Test("100,000 nested adoptions: each promise adopts the next, the innermost fulfilled last")
    func nestedAdoptions() async throws {
        let (innermost, resolver) = Promise<Int>.pending()
        var outer = innermost
        for _ in 0..<hops {
            let inner = outer
            outer = Promise.value(0).then(on: nil) { _ in inner }
        }
        #expect(outer.isPending)
        resolver.fulfill(42)
        #expect(try await outer.fulfilledValue() == 42)
    }

    @Test("100,000 Guarantee.map(on: nil) hops")
    func inlineGuaranteeMaps() async {
        let (root, resolve) = Guarantee<Int>.pending()
        var tail = root
        for _ in 0..<hops { tail = tail.map(on: nil) { $0 + 1 } }
        resolve(0)
        _ = await tail.outcome()
        #expect(tail.value == hops)
    }

    @Test("100,000 map hops on a serial queue")
    func serialQueueMaps() async throws {
        let queue = QueueTag.queue("deep-serial")
        let (root, resolver) = Promise<Int>.pending()
        var tail = root
        for _ in 0..<hops { tail = tail.map(on: queue) { $0 + 1 } }
        resolver.fulfill(0)
        #expect(try await tail.fulfilledValue() == hops)
    }

    @Test("a long pending chain keeps the order of several handlers per hop")
    func orderInDeepChain() async throws {
        let (root, resolver) = Promise<Int>.pending()
        let order = Recorder<Int>()
        var tail = root
        for hop in 0..<200 {
            _ = tail.done(on: nil) { _ in order.append(hop) }
            tail = tail.map(on: nil) { $0 + 1 }
        }
        resolver.fulfill(0)
        #expect(try await tail.fulfilledValue() == 200)
        #expect(order.all == Array(0..<200))
    }

    @Test(
        "past 32 nested inline handlers, a nested seal's handlers run once the sealing handler returns, still inside the outermost fulfill"
    )
    func postponedNestedSeals() {
        // By design (docs/promises.md, Caveats): below the depth limit a
        // nested seal runs its inline handlers at once, as PromiseKit does;
        // past it they wait for the sealing handler to return. Either way
        // they have all run when the outermost fulfill returns.
        var postponedAt: [Int] = []
        for length in 0..<100 {
            let (root, resolver) = Promise<Int>.pending()
            var tail = root
            for _ in 0..<length { tail = tail.map(on: nil) { $0 } }
            let atOnce = Recorder<Bool>()
            let dependents = Recorder<Unchecked<Promise<Int>>>()
            _ = tail.done(on: nil) { value in
                let (inner, innerResolver) = Promise<Int>.pending()
                let dependent = inner.map(on: nil) { $0 + 1 }
                innerResolver.fulfill(value)
                atOnce.append(dependent.isResolved)
                dependents.append(Unchecked(value: dependent))
            }
            resolver.fulfill(length)
            #expect(dependents.all.map { $0.value.value } == [length + 1], "chain of \(length)")
            if atOnce.all != [true] { postponedAt.append(length) }
        }
        #expect(
            postponedAt.allSatisfy { $0 >= 31 }, "a nested seal was postponed below the depth limit: \(postponedAt)")
    }

    @Test("wait() inside a deep inline handler on a promise it fulfils returns (no self-deadlock)")
    func waitInsideDeepHandler() async {
        await #expect(processExitsWith: .success) {
            alarm(5)
            let (root, resolver) = Promise<Int>.pending()
            var tail = root
            for _ in 0..<31 { tail = tail.map(on: nil) { $0 } }
            let finished = tail.map(on: nil) { value -> Int in
                let (inner, innerResolver) = Promise<Int>.pending()
                let dependent = inner.map(on: nil) { $0 + 1 }
                innerResolver.fulfill(value)
                return try dependent.wait()
            }
            resolver.fulfill(1)
            let value = try finished.wait()
            precondition(value == 2)
        }
    }
}
