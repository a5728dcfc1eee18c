import Dispatch
import Foundation
import Testing

@testable import Promises

/// A box that only the running step holds is sealed without its lock
/// (`EmptyBox.isSoleReference`). These tests check the test itself, and that
/// skipping the lock loses nothing when another thread held the box a moment
/// before (run under `--sanitize=thread` too: ThreadSanitizer checks the
/// hand-off).
@Suite("Sealing a box nobody else holds")
struct SoleReferenceTests {
    @Test("a box is the sole reference only while nothing else holds it")
    func countsReferences() {
        let box = EmptyBox<Sealant<Result<Int>>>()
        #expect(box.isSoleReference)
        var other: EmptyBox<Sealant<Result<Int>>>? = box
        #expect(!box.isSoleReference)
        let promise = Promise(box: box)
        other = nil
        #expect(!box.isSoleReference)
        withExtendedLifetime(promise) {}
        withExtendedLifetime(other) {}
    }

    @Test("a step whose promise was dropped still seals it, and its handlers run once")
    func droppedStepPromise() async throws {
        let (root, resolver) = Promise<Int>.pending()
        let seen = Recorder<Int>()
        // Nothing keeps the map's promise: its box is held only by the
        // handler on `root`, and then only by the running step.
        _ = root.map(on: nil) { $0 + 1 }.done(on: nil) { seen.append($0) }
        resolver.fulfill(1)
        #expect(seen.all == [2])
    }

    @Test(
        "another thread adds a handler to a step's promise and drops it while the source is fulfilled: the handler runs once",
        arguments: [false, true])
    func dropRacesSeal(onQueue: Bool) {
        let queue = QueueTag.queue("sole-reference")
        for _ in 0..<300 {
            let (root, resolver) = Promise<Int>.pending()
            let held = Locked<Promise<Int>?>(root.map(on: onQueue ? queue : nil) { $0 + 1 })
            let seen = Recorder<Int>()
            runTogether(
                {
                    let step = held.withLock { promise in
                        defer { promise = nil }
                        return promise
                    }
                    _ = step?.done(on: nil) { seen.append($0) }
                },
                {
                    resolver.fulfill(1)
                })
            if onQueue { queue.sync {} }
            #expect(seen.all == [2])
        }
    }
}
