import Dispatch
import Foundation
import PromiseKit
import XCTest

// Tests that change `conf`, and tests that need the main thread: XCTest runs
// each test method on the main thread, one at a time, before any Swift
// Testing test runs (see Client.swift).

/// A client's own helper that edits a configuration in place.
func useQueue(_ queue: DispatchQueue, in configuration: inout PMKConfiguration) {
    configuration.Q = (map: queue, return: queue)
}

extension PMKConfiguration {
    /// A client's `mutating` extension method.
    mutating func catchEverything() {
        catchPolicy = .allErrors
    }
}

final class ConfigurationTests: XCTestCase {
    var saved: PMKConfiguration!

    override func setUp() {
        super.setUp()
        saved = conf
    }

    override func tearDown() {
        conf = saved
        super.tearDown()
    }

    /// Whether `conf`'s catch policy lets `catch` see a cancellation.
    func catchSeesCancellation() -> Bool {
        let log = Log()
        let done = expectation(description: "finally")
        Promise<Int>(error: PMKError.cancelled).catch { _ in
            log.append("caught")
        }.finally {
            done.fulfill()
        }
        wait(for: [done], timeout: 60)
        return log.all == ["caught"]
    }

    // #12: `conf` is a value, kept and put back whole, changed through
    // `inout` and `mutating` methods; a copy changed alone changes nothing.
    func testConfIsAValue() {
        XCTAssertFalse(catchSeesCancellation())
        let before = conf
        var copy = conf
        copy.catchPolicy = .allErrors
        XCTAssertEqual(conf.catchPolicy, .allErrorsExceptCancellation)
        XCTAssertFalse(catchSeesCancellation())

        conf.catchEverything()
        XCTAssertEqual(conf.catchPolicy, .allErrors)
        XCTAssertTrue(catchSeesCancellation())
        conf = before
        XCTAssertFalse(catchSeesCancellation())

        let queue = DispatchQueue(label: "compat.inout")
        useQueue(queue, in: &conf)
        XCTAssertTrue(conf.Q.map === queue)
        XCTAssertTrue(conf.Q.return === queue)
        XCTAssertTrue(before.Q.map !== queue)
    }

    func testConfQueuesAndCatchPolicy() {
        let queue = DispatchQueue(label: "compat.conf")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        conf.Q = (map: queue, return: queue)
        PromiseKit.conf.Q.map = queue
        PromiseKit.conf.Q.return = queue
        conf.catchPolicy = .allErrors

        let log = Log()
        let caught = expectation(description: "cancelled error caught")
        Promise<Int>(error: PMKError.cancelled).map { $0 + 1 }.catch { _ in
            log.append("caught on queue: \(DispatchQueue.getSpecific(key: key) == 1)")
            caught.fulfill()
        }
        wait(for: [caught], timeout: 60)
        XCTAssertEqual(log.all, ["caught on queue: true"])
    }

    // #13: a handler that captures non-Sendable state, in Swift 6 mode too.
    func testLogHandlerCapturingNonSendableState() {
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
        let handler: (LogEvent) -> Void = conf.logHandler
        handler(.pendingGuaranteeDeallocated)
        XCTAssertEqual(model.events, ["promise", "guarantee"])
    }

    func testCauterizeLogsTheError() {
        let log = Log()
        conf.logHandler = { event in log.append("\(event)") }
        let done = expectation(description: "finally")
        Promise<Int>(error: FetchError.offline).cauterize().finally {
            done.fulfill()
        }
        wait(for: [done], timeout: 60)
        XCTAssertEqual(log.all.count, 1)
        XCTAssert(log.all.first?.hasPrefix("cauterized(") == true, "\(log.all)")
        XCTAssert(log.all.first?.hasSuffix("FetchError.offline)") == true, "\(log.all)")
    }

    // As in PromiseKit, an interpolated event is its case: log lines and
    // comparisons written against PromiseKit read the same here.
    func testAnEventInterpolatesAsItsCase() {
        XCTAssertEqual("\(LogEvent.waitOnMainThread)", "waitOnMainThread")
        XCTAssertEqual("\(LogEvent.pendingPromiseDeallocated)", "pendingPromiseDeallocated")
        XCTAssertEqual("\(LogEvent.pendingGuaranteeDeallocated)", "pendingGuaranteeDeallocated")
    }

    func testLeakEventsReachACustomLogHandler() {
        let log = Log()
        conf.logHandler = { event in
            switch event {
            case .pendingPromiseDeallocated: log.append("promise")
            case .pendingGuaranteeDeallocated: log.append("guarantee")
            default: break
            }
        }
        _ = Promise<Int>.pending()
        _ = Guarantee<Int>.pending()
        let makePromise = Promise<Int>.pending
        _ = makePromise()
        XCTAssertEqual(log.all, ["promise", "guarantee", "promise"])
    }

    // As in PromiseKit 8, every wait() on the main thread is logged, also on
    // a promise that is already resolved.
    func testWaitOnMainThreadIsLogged() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest should run this on the main thread")
        let log = Log()
        conf.logHandler = { event in
            if case .waitOnMainThread = event { log.append("\(event)") }
        }
        let (promise, resolver) = Promise<Int>.pending()
        DispatchQueue.global().async { resolver.fulfill(1) }
        XCTAssertEqual(try promise.wait(), 1)
        let (guarantee, resolve) = Guarantee<Int>.pending()
        DispatchQueue.global().async { resolve(2) }
        XCTAssertEqual(guarantee.wait(), 2)
        XCTAssertEqual(try Promise.value(3).wait(), 3)
        XCTAssertEqual(Guarantee.value(4).wait(), 4)
        XCTAssertEqual(log.all.count, 4)
    }

    func testHangTurnsTheMainRunLoop() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest should run this on the main thread")
        let log = Log()
        conf.logHandler = { event in log.append("\(event)") }
        let (promise, resolver) = Promise<String>.pending()
        // Work scheduled on the main queue runs while hang() waits there.
        DispatchQueue.main.async { resolver.fulfill("done") }
        XCTAssertEqual(try hang(promise), "done")
        XCTAssertThrowsError(try hang(Promise<Int>(error: FetchError.offline)))
        XCTAssertEqual(log.all, [], "hang() is not a wait() on the main thread")
    }

    func testDefaultQueuesDoNotNeedTheMainQueue() {
        // The main thread is blocked in a semaphore here, so nothing drains
        // the main queue: the chain must run elsewhere.
        let semaphore = DispatchSemaphore(value: 0)
        let log = Log()
        firstly {
            Promise.value(1)
        }.then {
            Promise.value($0 + 1)
        }.done {
            log.append("\($0)")
            semaphore.signal()
        }.catch { _ in }
        XCTAssertEqual(semaphore.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(log.all, ["2"])
        XCTAssertFalse(conf.Q.map === DispatchQueue.main)
        XCTAssertFalse(conf.Q.return === DispatchQueue.main)
    }
}
