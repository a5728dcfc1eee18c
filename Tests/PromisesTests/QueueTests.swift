import Dispatch
import Foundation
import Promises
import Testing

/// Where an operator is told to run its handler.
enum Placement: Sendable {
    /// The operator's default argument (`conf.Q.map` or `conf.Q.return`).
    case byDefault
    /// An explicit `on:`; `nil` runs inline.
    case on(DispatchQueue?)
}

/// One operator, called with a handler that must report where it runs.
struct QueueCase: Sendable, CustomTestStringConvertible {
    enum Slot: Sendable { case map, `return` }

    let name: String
    /// The `conf.Q` slot its handler runs on by default.
    let slot: Slot
    /// Calls the operator on an already-resolved thenable; `handler` must run exactly once.
    let run: @Sendable (Placement, @escaping () -> Void) -> Void

    var testDescription: String { name }

    init(_ name: String, _ slot: Slot, _ run: @escaping @Sendable (Placement, @escaping () -> Void) -> Void) {
        self.name = name
        self.slot = slot
        self.run = run
    }

    static let all: [QueueCase] = [
        QueueCase("Promise.then", .map) { placement, handler in
            let body = { (_: Int) -> Promise<Int> in
                handler()
                return .value(0)
            }
            switch placement {
            case .byDefault: _ = Promise.value(1).then(body)
            case .on(let queue): _ = Promise.value(1).then(on: queue, body)
            }
        },
        QueueCase("Promise.map", .map) { placement, handler in
            let body = { (_: Int) in handler() }
            switch placement {
            case .byDefault: _ = Promise.value(1).map(body)
            case .on(let queue): _ = Promise.value(1).map(on: queue, body)
            }
        },
        QueueCase("Promise.compactMap", .map) { placement, handler in
            let body = { (value: Int) -> Int? in
                handler()
                return value
            }
            switch placement {
            case .byDefault: _ = Promise.value(1).compactMap(body)
            case .on(let queue): _ = Promise.value(1).compactMap(on: queue, body)
            }
        },
        QueueCase("Promise.tap", .map) { placement, handler in
            let body = { (_: Promises.Result<Int>) in handler() }
            switch placement {
            case .byDefault: _ = Promise.value(1).tap(body)
            case .on(let queue): _ = Promise.value(1).tap(on: queue, body)
            }
        },
        QueueCase("Promise.recover -> Promise", .map) { placement, handler in
            let body = { (_: any Error) -> Promise<Int> in
                handler()
                return .value(0)
            }
            switch placement {
            case .byDefault: _ = Promise<Int>(error: TestError.first).recover(body)
            case .on(let queue): _ = Promise<Int>(error: TestError.first).recover(on: queue, body)
            }
        },
        QueueCase("Promise.recover -> Guarantee", .map) { placement, handler in
            let body = { (_: any Error) -> Guarantee<Int> in
                handler()
                return .value(0)
            }
            switch placement {
            case .byDefault: Promise<Int>(error: TestError.first).recover(body)
            case .on(let queue): Promise<Int>(error: TestError.first).recover(on: queue, body)
            }
        },
        QueueCase("Promise<Void>.recover -> Void", .map) { placement, handler in
            let body = { (_: any Error) -> Void in handler() }
            switch placement {
            case .byDefault: Promise<Void>(error: TestError.first).recover(body)
            case .on(let queue): Promise<Void>(error: TestError.first).recover(on: queue, body)
            }
        },
        QueueCase("Promise<Void>.recover throws -> Void", .map) { placement, handler in
            let body = { (_: any Error) throws -> Void in handler() }
            switch placement {
            case .byDefault: _ = Promise<Void>(error: TestError.first).recover(body)
            case .on(let queue): _ = Promise<Void>(error: TestError.first).recover(on: queue, body)
            }
        },
        QueueCase("Promise.mapValues", .map) { placement, handler in
            let body = { (value: Int) -> Int in
                handler()
                return value
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).mapValues(body)
            case .on(let queue): _ = Promise.value([1]).mapValues(on: queue, body)
            }
        },
        QueueCase("Promise.flatMapValues", .map) { placement, handler in
            let body = { (value: Int) -> [Int] in
                handler()
                return [value]
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).flatMapValues(body)
            case .on(let queue): _ = Promise.value([1]).flatMapValues(on: queue, body)
            }
        },
        QueueCase("Promise.compactMapValues", .map) { placement, handler in
            let body = { (value: Int) -> Int? in
                handler()
                return value
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).compactMapValues(body)
            case .on(let queue): _ = Promise.value([1]).compactMapValues(on: queue, body)
            }
        },
        QueueCase("Promise.thenFlatMap", .map) { placement, handler in
            let body = { (value: Int) -> Promise<[Int]> in
                handler()
                return .value([value])
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).thenFlatMap(body)
            case .on(let queue): _ = Promise.value([1]).thenFlatMap(on: queue, body)
            }
        },
        QueueCase("Promise.thenMap", .map) { placement, handler in
            let body = { (value: Int) -> Promise<Int> in
                handler()
                return .value(value)
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).thenMap(body)
            case .on(let queue): _ = Promise.value([1]).thenMap(on: queue, body)
            }
        },
        QueueCase("Promise.filterValues", .map) { placement, handler in
            let body = { (_: Int) -> Bool in
                handler()
                return true
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).filterValues(body)
            case .on(let queue): _ = Promise.value([1]).filterValues(on: queue, body)
            }
        },
        QueueCase("Promise.firstValue(where:)", .map) { placement, handler in
            let body = { (_: Int) -> Bool in
                handler()
                return true
            }
            switch placement {
            case .byDefault: _ = Promise.value([1]).firstValue(where: body)
            case .on(let queue): _ = Promise.value([1]).firstValue(on: queue, where: body)
            }
        },
        QueueCase("Guarantee.map", .map) { placement, handler in
            let body = { (_: Int) in handler() }
            switch placement {
            case .byDefault: _ = Guarantee.value(1).map(body)
            case .on(let queue): _ = Guarantee.value(1).map(on: queue, body)
            }
        },
        QueueCase("Guarantee.then", .map) { placement, handler in
            let body = { (_: Int) -> Guarantee<Int> in
                handler()
                return .value(0)
            }
            switch placement {
            case .byDefault: Guarantee.value(1).then(body)
            case .on(let queue): Guarantee.value(1).then(on: queue, body)
            }
        },
        QueueCase("Promise.done", .return) { placement, handler in
            let body = { (_: Int) in handler() }
            switch placement {
            case .byDefault: _ = Promise.value(1).done(body)
            case .on(let queue): _ = Promise.value(1).done(on: queue, body)
            }
        },
        QueueCase("Promise.get", .return) { placement, handler in
            let body = { (_: Int) in handler() }
            switch placement {
            case .byDefault: _ = Promise.value(1).get(body)
            case .on(let queue): _ = Promise.value(1).get(on: queue, body)
            }
        },
        QueueCase("Promise.catch", .return) { placement, handler in
            let body = { (_: any Error) in handler() }
            switch placement {
            case .byDefault: Promise<Int>(error: TestError.first).catch(body)
            case .on(let queue): Promise<Int>(error: TestError.first).catch(on: queue, body)
            }
        },
        QueueCase("Promise.ensure", .return) { placement, handler in
            switch placement {
            case .byDefault: _ = Promise.value(1).ensure(handler)
            case .on(let queue): _ = Promise.value(1).ensure(on: queue, handler)
            }
        },
        QueueCase("Promise.ensureThen", .return) { placement, handler in
            let body = { () -> Guarantee<Void> in
                handler()
                return .value
            }
            switch placement {
            case .byDefault: _ = Promise.value(1).ensureThen(body)
            case .on(let queue): _ = Promise.value(1).ensureThen(on: queue, body)
            }
        },
        QueueCase("PMKFinalizer.finally", .return) { placement, handler in
            let finalizer = Promise<Int>(error: TestError.first).catch(on: nil) { _ in }
            switch placement {
            case .byDefault: finalizer.finally(handler)
            case .on(let queue): finalizer.finally(on: queue, handler)
            }
        },
        QueueCase("Guarantee.done", .return) { placement, handler in
            let body = { (_: Int) in handler() }
            switch placement {
            case .byDefault: Guarantee.value(1).done(body)
            case .on(let queue): Guarantee.value(1).done(on: queue, body)
            }
        },
        QueueCase("Guarantee.get", .return) { placement, handler in
            let body = { (_: Int) in handler() }
            switch placement {
            case .byDefault: _ = Guarantee.value(1).get(body)
            case .on(let queue): _ = Guarantee.value(1).get(on: queue, body)
            }
        },
    ]
}

/// Runs `queueCase` and returns the tag of the queue its handler ran on.
func tagOfHandler(_ queueCase: QueueCase, _ placement: Placement) async -> String?? {
    let seen = Recorder<Unchecked<String?>>()
    await awaitHandOff { resume in
        let once = Once()
        queueCase.run(placement) {
            seen.append(Unchecked(value: QueueTag.current))
            if once.claim() { resume(()) }
        }
    }
    #expect(seen.count == 1, "\(queueCase.name) ran its handler \(seen.count) times")
    return seen.all.first.map(\.value)
}

extension GlobalConfiguration {
    @Suite("Queues: defaults, on: and on: nil")
    struct QueueTests {
        @Test("each operator runs on its conf.Q slot by default", arguments: QueueCase.all)
        func defaultSlot(_ queueCase: QueueCase) async {
            let mapQueue = QueueTag.queue("conf.map")
            let returnQueue = QueueTag.queue("conf.return")
            let tag = await withQueues((map: mapQueue, return: returnQueue)) {
                await tagOfHandler(queueCase, .byDefault)
            }
            #expect(tag == (queueCase.slot == .map ? "conf.map" : "conf.return"))
        }

        @Test("each operator runs on the queue given as on:", arguments: QueueCase.all)
        func explicitQueue(_ queueCase: QueueCase) async {
            let queue = QueueTag.queue("explicit")
            let tag = await tagOfHandler(queueCase, .on(queue))
            #expect(tag == "explicit")
        }

        @Test(
            "on: nil runs the handler inline: before the operator returns, on the calling thread",
            arguments: QueueCase.all)
        func inline(_ queueCase: QueueCase) async {
            let caller = QueueTag.queue("caller")
            let observed = caller.sync { () -> (ranBeforeReturn: Bool, tag: String?) in
                let seen = Recorder<Unchecked<String?>>()
                queueCase.run(.on(nil)) { seen.append(Unchecked(value: QueueTag.current)) }
                return (seen.count == 1, seen.all.first?.value)
            }
            #expect(observed.ranBeforeReturn)
            #expect(observed.tag == "caller")
        }

        @Test("on: nil on a pending promise runs the handler on the thread that resolves it, inside fulfill")
        func inlineOnResolvingThread() {
            let (promise, resolver) = Promise<Int>.pending()
            let seen = Recorder<Unchecked<String?>>()
            let tail = promise.map(on: nil) { $0 + 1 }.done(on: nil) { _ in
                seen.append(Unchecked(value: QueueTag.current))
            }
            let resolving = QueueTag.queue("resolver")
            resolving.sync { resolver.fulfill(1) }
            #expect(seen.all.map(\.value) == ["resolver"])
            #expect(tail.isFulfilled)
        }

        @Test("the defaults are one serial library queue, not the main queue")
        func defaultsAreNotMain() {
            let queues = conf.Q
            #expect(queues.map === PMKConfiguration.defaultQueue)
            #expect(queues.return === PMKConfiguration.defaultQueue)
            #expect(queues.map !== DispatchQueue.main)
            #expect(queues.return !== DispatchQueue.main)
        }

        @Test("handlers on the default queues run on the library queue, off the main thread")
        func defaultHandlersRunOnLibraryQueue() async throws {
            _ = QueueTag.defaultQueue
            let seen = Recorder<Unchecked<(String?, Bool)>>()
            let record = { seen.append(Unchecked(value: (QueueTag.current, Thread.isMainThread))) }
            let tail = Promise.value(1)
                .map { _ in record() }
                .then { _ -> Promise<Void> in
                    record()
                    return .value
                }
                .get { _ in record() }
                .done { _ in record() }
            try await tail.fulfilledValue()
            #expect(seen.count == 4)
            for entry in seen.all {
                #expect(entry.value.0 == "Promises.default")
                #expect(entry.value.1 == false)
            }
        }

        @Test("default-queue chains finish while the main actor (the main queue) is blocked")
        func defaultsNeedNoMainQueue() async {
            let finished = await MainActor.run { () -> Bool in
                let semaphore = DispatchSemaphore(value: 0)
                Promise.value(1)
                    .then { Promise.value($0 + 1) }
                    .map { $0 * 2 }
                    .done { _ in semaphore.signal() }
                    .catch { _ in }
                return semaphore.wait(timeout: .now() + settleLimit) == .success
            }
            #expect(finished, "a default-queue chain needed the main queue")
        }

        @Test("handlers on the default queues run in the order their promises resolve, across operators")
        func defaultQueueKeepsOrder() async throws {
            let order = Recorder<Int>()
            var tails: [Promise<Void>] = []
            var resolvers: [Resolver<Int>] = []
            for index in 0..<60 {
                let (promise, resolver) = Promise<Int>.pending()
                resolvers.append(resolver)
                switch index % 4 {
                case 0: tails.append(promise.map { order.append($0) })
                case 1: tails.append(promise.done { order.append($0) })
                case 2: tails.append(promise.get { order.append($0) }.asVoid())
                default: tails.append(promise.tap { order.append($0.isFulfilled ? index : -1) }.asVoid())
                }
            }
            for (index, resolver) in resolvers.enumerated() {
                resolver.fulfill(index)
            }
            try await when(fulfilled: tails).fulfilledValue()
            #expect(order.all == Array(0..<60))
        }

        @Test("flags: are passed to the queue (a .barrier handler waits for earlier work and holds back later work)")
        func flagsReachTheQueue() async throws {
            let concurrent = DispatchQueue(label: "PromisesTests.concurrent", attributes: .concurrent)
            let order = Recorder<String>()
            let release = DispatchSemaphore(value: 0)
            concurrent.async {
                release.wait()
                order.append("earlier")
            }
            let handled = Promise.value(1).map(on: concurrent, flags: .barrier) { _ in order.append("barrier") }
            concurrent.async { order.append("later") }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { release.signal() }
            try await handled.fulfilledValue()
            await awaitHandOff { resume in
                concurrent.async(flags: .barrier) { resume(()) }
            }
            #expect(order.all == ["earlier", "barrier", "later"])
        }
    }
}
