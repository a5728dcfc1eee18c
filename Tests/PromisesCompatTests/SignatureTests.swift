import Dispatch
import Foundation
import PromiseKit
import Testing

// PromiseKit's signatures, used the ways client code uses them: as function
// values, as protocol requirements met by Promise and Guarantee.

protocol MadeByPending {
    static func pending() -> (promise: Promise<Int>, resolver: Resolver<Int>)
}

extension Promise: MadeByPending where T == Int {}

protocol MadeByResolver {
    init(resolver body: (Resolver<Int>) throws -> Void)
}

extension Promise: MadeByResolver where T == Int {}

protocol GuaranteeMadeByPending {
    static func pending() -> (guarantee: Guarantee<Int>, resolve: (Int) -> Void)
}

extension Guarantee: GuaranteeMadeByPending where T == Int {}

protocol GuaranteeMadeByResolver {
    init(resolver body: (@escaping (Int) -> Void) -> Void)
}

extension Guarantee: GuaranteeMadeByResolver where T == Int {}

func makePending<Made: MadeByPending>(_: Made.Type) -> (promise: Promise<Int>, resolver: Resolver<Int>) {
    return Made.pending()
}

func make<Made: MadeByResolver>(_: Made.Type, _ value: Int) -> Made {
    return Made(resolver: { $0.fulfill(value) })
}

func makeGuarantee<Made: GuaranteeMadeByPending>(_: Made.Type) -> (guarantee: Guarantee<Int>, resolve: (Int) -> Void) {
    return Made.pending()
}

func makeGuarantee<Made: GuaranteeMadeByResolver>(_: Made.Type, _ value: Int) -> Made {
    return Made(resolver: { $0(value) })
}

@Suite("PromiseKit's signatures")
struct SignatureTests {
    @Test("Promise<Int>.pending and Guarantee<Int>.pending as function values (#8)")
    func pendingAsFunctionValue() throws {
        let makePromise = Promise<Int>.pending
        let (promise, resolver) = makePromise()
        resolver.fulfill(1)
        #expect(try promise.wait() == 1)
        let makeGuarantee = Guarantee<Int>.pending
        let (guarantee, resolve) = makeGuarantee()
        resolve(2)
        #expect(guarantee.wait() == 2)
        let makers: [() -> (promise: Promise<String>, resolver: Resolver<String>)] = [Promise<String>.pending]
        let made = makers[0]()
        made.resolver.fulfill("three")
        #expect(try made.promise.wait() == "three")
    }

    @Test("Promise<Int>.init(resolver:) and Guarantee<Int>.init(resolver:) as function values (#8)")
    func initializersAsFunctionValues() throws {
        let makePromise = Promise<Int>.init(resolver:)
        #expect(try makePromise { $0.fulfill(3) }.wait() == 3)
        let makeGuarantee = Guarantee<Int>.init(resolver:)
        #expect(makeGuarantee { $0(4) }.wait() == 4)
        let fetch: (@escaping (String) -> Void) -> Void = { seal in seal("fetched") }
        #expect(Guarantee(resolver: fetch).wait() == "fetched")
    }

    @Test("client protocols met by pending() and init(resolver:) (#8)")
    func protocolRequirements() throws {
        let (promise, resolver) = makePending(Promise<Int>.self)
        resolver.fulfill(5)
        #expect(try promise.wait() == 5)
        #expect(try make(Promise<Int>.self, 6).wait() == 6)
        let (guarantee, resolve) = makeGuarantee(Guarantee<Int>.self)
        resolve(7)
        #expect(guarantee.wait() == 7)
        #expect(makeGuarantee(Guarantee<Int>.self, 8).wait() == 8)
    }

    @Test("Guarantee.sortedValues takes its comparison unlabelled (#9)")
    func sortedValuesUnlabelled() {
        let numbers = Guarantee.value([3, 1, 2])
        #expect(numbers.sortedValues(>).wait() == [3, 2, 1])
        #expect(numbers.sortedValues(on: .global(), flags: nil, <).wait() == [1, 2, 3])
        #expect(numbers.sortedValues(on: nil) { $0 > $1 }.wait() == [3, 2, 1])
    }

    @Test("Guarantee.thenFlatMap takes any thenable and stays a Guarantee (#10)")
    func guaranteeThenFlatMap() {
        let numbers = Guarantee.value([1, 2])
        let viaPromises: Guarantee<[Int]> = numbers.thenFlatMap { Promise.value([$0, $0 * 10]) }
        #expect(viaPromises.wait() == [1, 10, 2, 20])
        let viaService: Guarantee<[Int]> = numbers.thenFlatMap { id in Service().load(id).map { [$0] } }
        #expect(viaService.wait() == [2, 4])
    }

    @Test("lastValue of any Collection: a Set, a Dictionary (#11)")
    func lastValueOfCollections() throws {
        #expect(try Promise.value(Set([4])).lastValue.wait() == 4)
        let entry = try Promise.value(["key": 1]).lastValue.wait()
        #expect(entry.key == "key" && entry.value == 1)
        #expect(throws: PMKError.self) { try Guarantee.value(Set<Int>()).lastValue.wait() }
        #expect(try Promise.value("abc").lastValue.wait() == "c")
    }

    @Test("Guarantee.pipe with a one-argument closure gets the Result (#14)")
    func guaranteePipe() {
        let log = Log()
        let guarantee = Guarantee.value(4)
        guarantee.pipe { log.append("\($0)") }
        guarantee.pipe { result in
            if case .fulfilled(let value) = result { log.append("value \(value)") }
        }
        #expect(log.all == ["fulfilled(4)", "value 4"])
    }

    @Test("Resolver<Void>: fulfill_(), fulfill(()), and fulfill as a function value (#5, #15)")
    func voidResolver() throws {
        try Promise<Void> { seal in seal.fulfill_() }.wait()
        let (promise, seal) = Promise<Void>.pending()
        let fulfill = seal.fulfill
        fulfill(())
        try promise.wait()
        let pending = Promise<Void>.pending()
        DispatchQueue.global().async {
            pending.resolver.fulfill_()
        }
        try pending.promise.wait()
    }

    @Test("Promise's debugDescription and description, as PromiseKit prints them (#6)")
    func descriptions() {
        let (pending, resolver) = Promise<Int>.pending()
        let mapped = [pending.map(on: nil) { $0 }, pending.map(on: nil) { $0 }]
        #expect(pending.debugDescription == "Promise<Int>.pending(handlers: 2)")
        #expect(String(reflecting: pending) == "Promise<Int>.pending(handlers: 2)")
        #expect(pending.description == "Promise(…Int)")
        resolver.fulfill(3)
        #expect(mapped.map { $0.value } == [3, 3])
        #expect(pending.debugDescription == "Promise<Int>.fulfilled(3)")
        #expect(String(describing: pending) == "Promise(3)")
        let failed = Promise<Int>(error: FetchError.offline)
        #expect(failed.debugDescription == "Promise<Int>.rejected(FetchError.offline)")
        #expect(String(reflecting: failed) == "Promise<Int>.rejected(FetchError.offline)")
        #expect("\(failed)" == "Promise(offline)")
        #expect(Promise.value([1]).debugDescription == "Promise<Array<Int>>.fulfilled([1])")
    }
}
