import Dispatch
import Testing

@testable import Promises

#if canImport(CDispatch)
import CDispatch
#endif

/// Operators hand their box to a queue with `dispatch_async_f` rather than a
/// block (`DirectDispatch`). These tests check the shortcut is taken here, is
/// sound, and keeps what the block path gave: order, the queue, lifetimes.
@Suite("DirectDispatch: operators queue their box without a block")
struct DirectDispatchTests {
    #if canImport(CDispatch)
    @Test(
        "the C queue read from a DispatchQueue is the one libdispatch runs work on",
        arguments: ["serial", "targeted", "global"])
    func readsTheCQueue(kind: String) {
        let queue: DispatchQueue
        switch kind {
        case "serial": queue = DispatchQueue(label: "DirectDispatchTests.serial")
        case "targeted": queue = DispatchQueue(label: "DirectDispatchTests.targeted", target: .global())
        default: queue = .global()
        }
        #expect(DirectDispatch.layoutHolds)
        #expect(DirectDispatch.isUsable)
        var current: OpaquePointer?
        queue.sync { current = dispatch_get_current_queue() }
        #expect(current != nil)
        #expect(QueueReference(queue).directQueue == current)
    }
    #endif

    @Test("map(on:) on a serial queue runs bodies in the order they were added, on that queue")
    func keepsOrder() async throws {
        let queue = QueueTag.queue("direct-order")
        let source = Promise.value(0)
        let seen = Locked<[Int]>([])
        let onQueue = Locked(true)
        var last = source
        for index in 0..<2_000 {
            last = source.map(on: queue) { _ in
                if DispatchQueue.getSpecific(key: QueueTag.key) != "direct-order" {
                    onQueue.withLock { $0 = false }
                }
                seen.withLock { $0.append(index) }
                return index
            }
        }
        #expect(try await last.async() == 1_999)
        #expect(seen.withLock { $0 } == Array(0..<2_000))
        #expect(onQueue.withLock { $0 })
    }

    @Test("a queued box is freed once it has run, and keeps nothing of the queue", arguments: [true, false])
    func boxFreedAfterRunning(pending: Bool) async throws {
        let queue = QueueTag.queue("direct-lifetime")
        let (source, resolver) = Promise<Int>.pending()
        var promise: Promise<Int>? = (pending ? source : Promise.value(1)).map(on: queue) { $0 + 1 }
        weak let box = promise?.box
        #expect(box != nil)
        resolver.fulfill(1)
        #expect(try await promise?.async() == 2)
        await drain(queue)
        promise = nil
        #expect(box == nil)
    }

    @Test("handlers hop between queues without blocks and chains of 10,000 hops finish")
    func longChainAcrossQueues() async throws {
        let queues = [QueueTag.queue("direct-a"), QueueTag.queue("direct-b")]
        let (head, resolver) = Promise<Int>.pending()
        var tail = head
        for index in 0..<10_000 {
            tail = tail.map(on: queues[index % 2]) { $0 + 1 }
        }
        resolver.fulfill(0)
        #expect(try await tail.async() == 10_000)
    }
}
