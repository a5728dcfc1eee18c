import Dispatch
import Foundation
import Promises
import Testing

// PromiseKit 8 client code, compiled in Swift 6 language mode with this
// package's strict settings (PromisesCompatTests and its Swift 6 twin
// compile client code with none), the typical chain many times over for the
// ThreadSanitizer pass.

/// A non-Sendable model object, as client code is full of; PromiseKit lets
/// handlers capture it.
final class Inventory {
    var items: [String] = []
    var log: [String] = []
}

/// A callback API in the old style.
final class LegacyStore {
    func fetch(_ key: String, completion: @escaping @Sendable (String?, (any Error)?) -> Void) {
        DispatchQueue.global().async {
            key.isEmpty ? completion(nil, TestError.first) : completion(key.uppercased(), nil)
        }
    }

    func fetch(_ key: String) -> Promise<String> {
        Promise { seal in
            fetch(key) { value, error in seal.resolve(value, error) }
        }
    }
}

extension GlobalConfiguration {
    @Suite("PromiseKit client code in Swift 6 mode")
    struct ClientCodeTests {
        @Test("a typical chain: firstly / then / map / get / done / catch / finally, capturing a non-Sendable object")
        func typicalChain() async {
            // Many rounds, so that the ThreadSanitizer pass sees the hand-offs
            // between threads in many interleavings.
            let queue = DispatchQueue(label: "client")
            await withQueues((map: queue, return: queue)) {
                for _ in 0..<200 {
                    let inventory = Inventory()
                    let store = LegacyStore()
                    let (finished, finish) = Guarantee<Void>.pending()
                    firstly {
                        store.fetch("apple")
                    }.then { apple in
                        when(fulfilled: Promise.value(apple), store.fetch("pear"))
                    }.map { apple, pear in
                        [apple, pear]
                    }.get { items in
                        inventory.log.append("got \(items.count)")
                    }.done { items in
                        inventory.items = items
                    }.catch { error in
                        inventory.log.append("error \(error)")
                    }.finally {
                        inventory.log.append("finally")
                        finish(())
                    }
                    _ = await finished.outcome()
                    #expect(inventory.items == ["APPLE", "PEAR"])
                    #expect(inventory.log == ["got 2", "finally"])
                }
            }
        }

        @Test("a failing fetch reaches catch; recover with a Guarantee ends a chain that cannot fail")
        func failingChain() async throws {
            let store = LegacyStore()
            let inventory = Inventory()
            let recovered: Guarantee<String> = store.fetch("").recover { _ in Guarantee.value("fallback") }
            let value = await recovered.async()
            #expect(value == "fallback")
            let caught = try await store.fetch("").map { inventory.items.append($0) }.rejection()
            #expect(caught as? TestError == .first)
            #expect(inventory.items.isEmpty)
        }

        @Test("conf: queues, catch policy and an exhaustive logHandler switch")
        func configuration() async {
            let saved = (conf.Q, conf.catchPolicy)
            let events = Recorder<String>()
            await withLogHandler({ event in
                switch event {
                case .waitOnMainThread: events.append("wait")
                case .pendingPromiseDeallocated: events.append("promise")
                case .pendingGuaranteeDeallocated: events.append("guarantee")
                case .cauterized(let error): events.append("cauterized \(error)")
                }
            }) {
                let queue = DispatchQueue(label: "client.conf")
                conf.Q = (map: queue, return: queue)
                conf.Q.map = queue
                conf.Q.return = queue
                conf.catchPolicy = .allErrors
                conf.logHandler(.pendingPromiseDeallocated)
            }
            conf.Q = saved.0
            conf.catchPolicy = saved.1
            #expect(events.all == ["promise"])
        }

        @Test("pending(), tuple destructuring, wait() and async()")
        func pendingAndBridging() async throws {
            let (promise, resolver) = Promise<Int>.pending()
            DispatchQueue.global().async { resolver.fulfill(1) }
            #expect(try promise.wait() == 1)
            let (guarantee, resolve) = Guarantee<Int>.pending()
            resolve(2)
            #expect(await guarantee.async() == 2)
            let race1 = race(Promise.value(3), after(seconds: 5).map { 4 })
            #expect(try await race1.async() == 3)
        }
    }
}
