import Dispatch
import Foundation
import PromiseKit
import Testing

// Extensions client code adds to PromiseKit's types.

protocol Labelled {
    var label: String { get }
}

extension Promise: Labelled {
    var label: String { return isPending ? "pending" : "resolved" }
}

extension Promise {
    convenience init(loading id: Int, from service: Service) where T == Int {
        self.init { seal in
            service.load(id) { value, error in
                seal.resolve(value, error)
            }
        }
    }

    static func failing(_ error: Error) -> Promise<T> {
        return Promise(error: error)
    }

    func logged(into log: Log) -> Self {
        log.append(label)
        return self
    }
}

extension Promise where T == Int {
    func doubled() -> Promise<Int> {
        return map { $0 * 2 }
    }
}

/// A protocol with an initializer requirement, met in an extension: Swift
/// allows that only for a `final` class, as PromiseKit's `Promise` is.
protocol MadeFromNumber {
    init(number: Int)
}

extension Promise: MadeFromNumber where T == Int {
    convenience init(number: Int) {
        self.init { seal in seal.fulfill(number) }
    }
}

func make<Made: MadeFromNumber>(_: Made.Type, from number: Int) -> Made {
    return Made(number: number)
}

/// A client's own `Thenable`, already resolved: PromiseKit's operators
/// work on it, and `catch` and `recover` with `CatchMixin`.
final class Ready<T>: Thenable, CatchMixin {
    let result: Result<T>?

    init(_ value: T) {
        result = .fulfilled(value)
    }

    init(error: Error) {
        result = .rejected(error)
    }

    func pipe(to: @escaping (Result<T>) -> Void) {
        if let result = result {
            to(result)
        }
    }
}

@Suite("Client extensions of PromiseKit's types")
struct ExtensionTests {
    @Test("a convenience init, a static factory, -> Self, a where-clause method, protocol conformances")
    func clientExtensions() throws {
        let log = Log()
        let loaded = Promise(loading: 21, from: Service())
        #expect(try loaded.doubled().wait() == 84)
        let pending = Promise<Int>.pending()
        #expect(pending.promise.logged(into: log) === pending.promise)
        pending.resolver.fulfill(1)
        let value = Promise.value(5)
        #expect(value.logged(into: log) === value)
        #expect(try value.doubled().wait() == 10)
        #expect(log.all == ["pending", "resolved"])
        #expect(throws: FetchError.offline) { try Promise<Int>.failing(FetchError.offline).wait() }
        let (unresolved, resolver) = Promise<Int>.pending()
        let labelled: [Labelled] = [value, unresolved]
        #expect(labelled.map { $0.label } == ["resolved", "pending"])
        resolver.fulfill(0)
        #expect(try make(Promise<Int>.self, from: 8).wait() == 8)
    }

    @Test("a client's own Thenable gets then, map and when; with CatchMixin, recover and ensure")
    func clientThenable() throws {
        #expect(try Ready(2).map { $0 + 1 }.wait() == 3)
        #expect(try Ready(2).then { Promise.value($0 * 10) }.wait() == 20)
        #expect(try when(fulfilled: [Ready(1), Ready(2)]).wait() == [1, 2])
        #expect(try Promise(Ready("bridged")).wait() == "bridged")
        #expect(Ready(1).isFulfilled && Ready(1).value == 1)
        #expect(try Ready<Int>(error: FetchError.offline).recover { _ in Promise.value(9) }.wait() == 9)
        let recovered: Guarantee<Int> = Ready<Int>(error: FetchError.offline).recover { _ in Guarantee.value(10) }
        #expect(recovered.wait() == 10)
        #expect(throws: FetchError.notFound) { try Ready<Int>(error: FetchError.notFound).ensure {}.wait() }
    }

    @Test("chains built in loops, as PromiseKit's documentation shows")
    func documentedPatterns() throws {
        var fade = Guarantee()
        for _ in 0..<3 {
            fade = fade.then { after(seconds: 0.001) }
        }
        fade.wait()
        var chain = Promise()
        let steps: [() -> Promise<Void>] = [{ Promise() }, { Service().ping() }]
        for step in steps {
            chain = chain.then(step)
        }
        try chain.wait()

        var attempts = 0
        func attempt() -> Promise<Int> {
            attempts += 1
            return Service().load(attempts < 3 ? -1 : 3).recover { error -> Promise<Int> in
                guard attempts < 3 else { throw error }
                return after(.milliseconds(1)).then(attempt)
            }
        }
        #expect(try attempt().wait() == 6)
        #expect(attempts == 3)

        let foo = Promise()
        let bar = Promise.value(())
        let both: Promise<Void> = when(fulfilled: foo, bar)
        try both.wait()
        let early = Promise<Bool> {
            return $0.fulfill(true)
        }
        #expect(try early.wait())
    }
}
