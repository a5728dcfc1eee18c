import Promises
import Testing

@Suite("Guarantee operators")
struct GuaranteeTests {
    @Test("map, then, get, done and asVoid carry the value")
    func operators() async {
        let seen = Recorder<String>()
        let (source, resolve) = Guarantee<Int>.pending()
        let mapped = source.map { $0 * 2 }
        let chained: Guarantee<String> = mapped.then { value in Guarantee.value("v\(value)") }
        let got = chained.get { seen.append("get \($0)") }
        let done: Guarantee<Void> = got.done { seen.append("done \($0)") }
        let void: Guarantee<Void> = got.asVoid()
        #expect(done.isPending)
        resolve(21)
        _ = await done.outcome()
        _ = await void.outcome()
        #expect(got.value == "v42")
        #expect(seen.all == ["get v42", "done v42"])
    }

    @Test("then adopts a pending guarantee")
    func thenAdoptsPending() async {
        let (inner, resolve) = Guarantee<Int>.pending()
        let outer = Guarantee.value(0).then(on: nil) { _ in inner }
        #expect(outer.isPending)
        resolve(5)
        _ = await outer.outcome()
        #expect(outer.value == 5)
    }

    @Test("pipe gets the result, at once when resolved")
    func pipeResult() {
        let seen = Recorder<Int>()
        Guarantee.value(3).pipe { if case .fulfilled(let value) = $0 { seen.append(value) } }
        #expect(seen.all == [3])
        let (pending, resolve) = Guarantee<Int>.pending()
        pending.pipe { if case .fulfilled(let value) = $0 { seen.append(value) } }
        resolve(4)
        #expect(seen.all == [3, 4])
    }

    @Test("Guarantee { } resolved later, from another thread")
    func resolvedLater() async {
        let guarantee = Guarantee<String> { resolve in
            let later = Unchecked(value: resolve)
            DispatchQueueHop.later { later.value("later") }
        }
        #expect(await guarantee.async() == "later")
    }

    @Test("promises and guarantees describe their state")
    func descriptions() {
        let (pending, resolver) = Promise<Int>.pending()
        #expect(pending.description.contains("Int"))
        resolver.fulfill(12)
        #expect(pending.description.contains("12"))
        #expect(Promise<Int>(error: TestError.numbered(3)).description.contains("numbered(3)"))
    }
}
