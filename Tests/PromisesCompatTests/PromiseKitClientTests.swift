import Dispatch
import Foundation
import Promises
import XCTest

// Code written the way PromiseKit 8 clients write it, compiled in Swift 5
// language mode with no upcoming features: only `import PromiseKit` became
// `import Promises`. XCTest runs each test method on the main thread, which
// is what `.waitOnMainThread` needs.

enum FetchError: Error {
    case notFound
    case offline
}

/// A plain non-Sendable class, captured by handlers as PromiseKit allows.
class ViewModel {
    var title = ""
    var items: [Int] = []
    var errors: [Error] = []
    var events: [String] = []
}

/// A completion-handler API wrapped the PromiseKit way.
class Service {
    let queue = DispatchQueue(label: "service")

    func load(_ id: Int, completion: @escaping (Int?, Error?) -> Void) {
        queue.async {
            if id < 0 {
                completion(nil, FetchError.notFound)
            } else {
                completion(id * 2, nil)
            }
        }
    }

    func load(_ id: Int) -> Promise<Int> {
        return Promise { seal in
            load(id) { value, error in
                seal.resolve(value, error)
            }
        }
    }

    func ping() -> Promise<Void> {
        return Promise { seal in
            queue.async {
                seal.fulfill()
            }
        }
    }

    func title() -> Guarantee<String> {
        return Guarantee { seal in
            queue.async {
                seal("Title")
            }
        }
    }
}

/// Extensions client code adds to `Promise`, as it does with PromiseKit's.
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

    func logged(into model: ViewModel) -> Self {
        model.events.append(label)
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

class PromiseKitClientTests: XCTestCase {
    var savedQ: (map: DispatchQueue?, return: DispatchQueue?)!
    var savedPolicy: CatchPolicy!
    // `@Sendable` spelled out: storing it as a plain `(LogEvent) -> Void`, as
    // PromiseKit allows, compiles too, with a Sendable-conversion warning.
    var savedLogHandler: (@Sendable (LogEvent) -> Void)!

    override func setUp() {
        super.setUp()
        savedQ = conf.Q
        savedPolicy = conf.catchPolicy
        savedLogHandler = conf.logHandler
    }

    override func tearDown() {
        conf.Q = savedQ
        conf.catchPolicy = savedPolicy
        conf.logHandler = savedLogHandler
        super.tearDown()
    }

    func testChainWithFirstlyThenMapDoneCatchFinally() {
        let service = Service()
        let model = ViewModel()
        let ex = expectation(description: "finally")

        firstly {
            service.load(1)
        }.then { value in
            service.load(value)
        }.map { value in
            value + 1
        }.get { value in
            model.events.append("get \(value)")
        }.done { value in
            model.items.append(value)
        }.catch { error in
            model.errors.append(error)
        }.finally {
            model.events.append("finally")
            ex.fulfill()
        }

        waitForExpectations(timeout: 10)
        XCTAssertEqual(model.items, [5])
        XCTAssertEqual(model.events, ["get 5", "finally"])
        XCTAssertTrue(model.errors.isEmpty)
    }

    func testErrorsReachCatch() {
        let service = Service()
        let model = ViewModel()
        let ex = expectation(description: "finally")

        service.load(-1).then { value in
            service.load(value)
        }.done { value in
            model.items.append(value)
        }.catch { error in
            model.errors.append(error)
        }.finally {
            ex.fulfill()
        }

        waitForExpectations(timeout: 10)
        XCTAssertTrue(model.items.isEmpty)
        XCTAssertEqual(model.errors.count, 1)
        if case FetchError.notFound? = model.errors.first {} else {
            XCTFail("expected FetchError.notFound, got \(model.errors)")
        }
    }

    func testVoidPromisesAndGuarantees() {
        let service = Service()
        let model = ViewModel()
        let ensured = expectation(description: "ensure")
        let both = expectation(description: "when")

        service.ping().then {
            service.title()
        }.done { title in
            model.title = title
        }.ensure {
            model.events.append("ensure")
            ensured.fulfill()
        }.cauterize()

        when(fulfilled: service.ping(), service.ping()).done {
            both.fulfill()
        }.catch { _ in
            XCTFail()
        }

        waitForExpectations(timeout: 10)
        XCTAssertEqual(model.title, "Title")
        XCTAssertEqual(model.events, ["ensure"])
    }

    func testPendingAndCompletionHandlerResolve() {
        let (promise, resolver) = Promise<Int>.pending()
        let pending = Promise<String>.pending()

        DispatchQueue.global().async {
            let value: Int? = 7
            let error: Error? = nil
            resolver.resolve(value, error)
            pending.resolver.resolve(nil, FetchError.offline)
        }

        XCTAssertEqual(try promise.wait(), 7)
        XCTAssertThrowsError(try pending.promise.wait()) { error in
            guard case FetchError.offline = error else { return XCTFail("\(error)") }
        }

        let both = Promise<Int>.pending()
        let noValue: Int? = nil
        let noError: Error? = nil
        both.resolver.resolve(noValue, noError)
        XCTAssertThrowsError(try both.promise.wait()) { error in
            guard case PMKError.invalidCallingConvention = error else { return XCTFail("\(error)") }
        }
        let viaResult = Promise<Int> { seal in
            seal.resolve(Swift.Result<Int, Error>.success(3))
        }
        XCTAssertEqual(viaResult.value, 3)
        let viaOwnResult = Promise<Int> { seal in seal.resolve(.fulfilled(4)) }
        XCTAssertEqual(viaOwnResult.value, 4)
    }

    func testWhenTuplesAndRace() throws {
        let service = Service()
        let (a, b) = try when(fulfilled: service.load(1), Promise.value("b")).wait()
        XCTAssertEqual(a, 2)
        XCTAssertEqual(b, "b")
        let (x, y, z) = try when(fulfilled: service.load(1), service.load(2), Promise.value(true)).wait()
        XCTAssertEqual([x, y], [2, 4])
        XCTAssertTrue(z)

        let first = try race(service.load(5), after(seconds: 5).then { Promise.value(0) }).wait()
        XCTAssertEqual(first, 10)

        let values = try when(fulfilled: [service.load(1), service.load(2), service.load(3)]).wait()
        XCTAssertEqual(values, [2, 4, 6])
    }

    func testAfterAndDispatchQueueAsyncPromise() throws {
        let start = DispatchTime.now()
        after(seconds: 0.05).wait()
        XCTAssertGreaterThanOrEqual(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds, 50_000_000)

        let model = ViewModel()
        let computed: Guarantee<Int> = DispatchQueue.global().async(.promise) {
            model.items.count + 40
        }
        XCTAssertEqual(computed.wait(), 40)

        let thrown = DispatchQueue.global().async(.promise) { () throws -> Int in
            throw FetchError.offline
        }
        XCTAssertThrowsError(try thrown.wait())
    }

    func testRecoverWithGuarantee() {
        let service = Service()
        let recovered: Guarantee<Int> = service.load(-1).recover { _ in Guarantee.value(0) }
        XCTAssertEqual(recovered.wait(), 0)

        let rethrowing = service.load(-1).recover { error -> Promise<Int> in
            guard case FetchError.notFound = error else { throw error }
            return .value(99)
        }
        XCTAssertEqual(try rethrowing.wait(), 99)
        XCTAssertEqual(Guarantee.value(5).wait(), 5)
    }

    func testPMKErrorSwitch() {
        func message(_ error: PMKError) -> String {
            switch error {
            case .invalidCallingConvention: return "a"
            case .returnedSelf: return "b"
            case .badInput: return "c"
            case .cancelled: return "d"
            case .compactMap: return "e"
            case .emptySequence: return "f"
            case .noWinner: return "g"
            }
        }
        XCTAssertEqual(message(.noWinner), "g")
        XCTAssertTrue(PMKError.cancelled.isCancelled)
        XCTAssertTrue((PMKError.cancelled as Error).isCancelled)
    }

    func testConfQueuesAndCatchPolicy() {
        let q = DispatchQueue(label: "compat.conf")
        let key = DispatchSpecificKey<Int>()
        q.setSpecific(key: key, value: 1)
        conf.Q = (map: q, return: q)
        conf.Q.map = q
        conf.Q.return = q
        conf.catchPolicy = .allErrors

        let model = ViewModel()
        let ex = expectation(description: "cancelled error caught")
        Promise<Int>(error: PMKError.cancelled).map { $0 + 1 }.catch { error in
            model.events.append("caught on q: \(DispatchQueue.getSpecific(key: key) == 1)")
            ex.fulfill()
        }
        waitForExpectations(timeout: 10)
        XCTAssertEqual(model.events, ["caught on q: true"])
    }

    func testLogHandlerExhaustiveSwitchAndDirectCall() {
        let model = ViewModel()
        conf.logHandler = { event in
            switch event {
            case .waitOnMainThread:
                model.events.append("wait")
            case .pendingPromiseDeallocated:
                model.events.append("promise")
            case .pendingGuaranteeDeallocated:
                model.events.append("guarantee")
            case .cauterized(let error):
                model.events.append("cauterized \(error)")
            }
        }
        conf.logHandler(.pendingPromiseDeallocated)
        XCTAssertEqual(model.events, ["promise"])
    }

    // As in PromiseKit 8, every wait() on the main thread is logged, also on
    // a promise that is already resolved.
    func testWaitOnMainThreadIsLogged() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest should run this on the main thread")
        let lock = NSLock()
        let model = ViewModel()
        conf.logHandler = { event in
            if case .waitOnMainThread = event {
                lock.lock()
                model.events.append("\(event)")
                lock.unlock()
            }
        }
        let (promise, resolver) = Promise<Int>.pending()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { resolver.fulfill(1) }
        XCTAssertEqual(try promise.wait(), 1)
        let (guarantee, resolve) = Guarantee<Int>.pending()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { resolve(2) }
        XCTAssertEqual(guarantee.wait(), 2)
        XCTAssertEqual(try Promise.value(3).wait(), 3)
        XCTAssertEqual(Guarantee.value(4).wait(), 4)
        lock.lock()
        XCTAssertEqual(model.events.count, 4)
        lock.unlock()
    }

    func testHangTurnsTheMainRunLoop() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest should run this on the main thread")
        let lock = NSLock()
        let model = ViewModel()
        conf.logHandler = { event in
            lock.lock()
            model.events.append("\(event)")
            lock.unlock()
        }
        let (promise, resolver) = Promise<String>.pending()
        // Work scheduled on the main queue runs while hang() waits there.
        DispatchQueue.main.async { resolver.fulfill("done") }
        XCTAssertEqual(try hang(promise), "done")
        XCTAssertThrowsError(try hang(Promise<Int>(error: FetchError.offline)))
        lock.lock()
        XCTAssertEqual(model.events, [], "hang() is not a wait() on the main thread")
        lock.unlock()
    }

    func testGuaranteeSequenceHelpersStayGuarantees() {
        conf.logHandler = { _ in }  // wait() on the main thread is expected here
        let numbers = Guarantee.value([3, 1, 2])
        let doubled: Guarantee<[Int]> = numbers.mapValues { $0 * 2 }
        let sorted: Guarantee<[Int]> = numbers.sortedValues()
        let descending: Guarantee<[Int]> = numbers.sortedValues { $0 > $1 }
        let odd: Guarantee<[Int]> = numbers.filterValues { $0 % 2 == 1 }
        let some: Guarantee<[Int]> = numbers.compactMapValues { $0 == 2 ? nil : $0 }
        let flat: Guarantee<[Int]> = numbers.flatMapValues { [$0, $0] }
        let later: Guarantee<[Int]> = numbers.thenMap { Guarantee.value($0 + 10) }
        let flatLater: Guarantee<[Int]> = numbers.thenFlatMap { Guarantee.value([$0, 0]) }
        XCTAssertEqual(doubled.wait(), [6, 2, 4])
        XCTAssertEqual(sorted.wait(), [1, 2, 3])
        XCTAssertEqual(descending.wait(), [3, 2, 1])
        XCTAssertEqual(odd.wait(), [3, 1])
        XCTAssertEqual(some.wait(), [3, 1])
        XCTAssertEqual(flat.wait(), [3, 3, 1, 1, 2, 2])
        XCTAssertEqual(later.wait(), [13, 11, 12])
        XCTAssertEqual(flatLater.wait(), [3, 0, 1, 0, 2, 0])
    }

    func testLeakEventsReachACustomLogHandler() {
        let model = ViewModel()
        conf.logHandler = { event in
            switch event {
            case .pendingPromiseDeallocated: model.events.append("promise")
            case .pendingGuaranteeDeallocated: model.events.append("guarantee")
            default: break
            }
        }
        _ = Promise<Int>.pending()
        _ = Guarantee<Int>.pending()
        XCTAssertEqual(model.events, ["promise", "guarantee"])
    }

    func testDefaultQueuesDoNotNeedTheMainQueue() {
        // XCTest's main thread is blocked in a semaphore here, so nothing
        // drains the main queue: the chain must run elsewhere.
        let semaphore = DispatchSemaphore(value: 0)
        var value = 0
        firstly {
            Promise.value(1)
        }.then {
            Promise.value($0 + 1)
        }.done {
            value = $0
            semaphore.signal()
        }.catch { _ in }
        XCTAssertEqual(semaphore.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(value, 2)
        XCTAssertFalse(conf.Q.map === DispatchQueue.main)
        XCTAssertFalse(conf.Q.return === DispatchQueue.main)
    }

    func testResultAndStateProperties() {
        let promise = Promise.value(3)
        switch promise.result {
        case .fulfilled(let value)?: XCTAssertEqual(value, 3)
        case .rejected?, nil: XCTFail()
        }
        XCTAssertTrue(promise.isFulfilled)
        XCTAssertFalse(promise.isPending)
        let failed = Promise<Int>(error: FetchError.offline)
        XCTAssertTrue(failed.isRejected)
        XCTAssertNotNil(failed.error)

        XCTAssertNoThrow(try promise.tap { result in
            switch result {
            case .fulfilled(let value): XCTAssertEqual(value, 3)
            case .rejected: XCTFail()
            }
        }.asVoid().wait())
    }

    func testClientExtensions() throws {
        let model = ViewModel()
        let loaded = Promise(loading: 21, from: Service())
        XCTAssertEqual(try loaded.doubled().wait(), 84)
        let pending = Promise<Int>.pending()
        XCTAssertTrue(pending.promise.logged(into: model) === pending.promise)
        pending.resolver.fulfill(1)
        let value = Promise.value(5)
        XCTAssertTrue(value.logged(into: model) === value)
        XCTAssertEqual(try value.doubled().wait(), 10)
        XCTAssertEqual(model.events, ["pending", "resolved"])
        XCTAssertThrowsError(try Promise<Int>.failing(FetchError.offline).wait())
        let labelled: [Labelled] = [value, Promise<Int>.pending().promise]
        XCTAssertEqual(labelled.map { $0.label }, ["resolved", "pending"])
        XCTAssertEqual(try make(Promise<Int>.self, from: 8).wait(), 8)
    }

    func testSequenceHelpers() throws {
        let sorted = try Promise.value([3, 1, 2]).mapValues { $0 * 2 }.sortedValues().wait()
        XCTAssertEqual(sorted, [2, 4, 6])
        let first = try Promise.value([1, 2, 3]).filterValues { $0 > 1 }.firstValue.wait()
        XCTAssertEqual(first, 2)
        let loaded = try Promise.value([1, 2]).thenMap { Service().load($0) }.wait()
        XCTAssertEqual(loaded, [2, 4])
    }
}
