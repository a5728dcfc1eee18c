import Dispatch
import Foundation
import JobConfig
import JobStore
import JobStoreSQLite
import Promises
import Synchronization
import Testing

@testable import JobEngine

private let queueName = DispatchSpecificKey<String>()

/// Each stage body runs on the `Q` queue of its kind, or its `on:` queue.
@Suite(.serialized) struct EngineQueueTests {
    @Test func bodiesRunOnTheQueueOfTheirKind() async throws {
        let labels = Mutex<[String: String]>([:])
        let harness = try EngineHarness(
            [
                """
                name: queued
                pipeline:
                  - firstly: first
                    run: [placeholder]
                  - then: second
                    run: [placeholder]
                  - then: third
                    run: [placeholder]
                    on: slow
                  - done: last
                    run: [placeholder]
                  - finally: cleanup
                    run: [placeholder]
                """
            ], queues: ["map": 3, "return": 1, "slow": 2],
            customAction: { _, stage, input in
                let label = DispatchQueue.getSpecific(key: queueName) ?? "elsewhere"
                labels.withLock { $0[stage.name] = label }
                return .value(input)
            })
        for (name, queue) in harness.engine.queues.byName {
            for slot in queue.slots { slot.setSpecific(key: queueName, value: name) }
        }
        let detail = try await harness.resolved(try await harness.submit("queued", input: "x"))
        #expect(detail.job.state == JobState.fulfilled)
        let seen = labels.withLock { $0 }
        #expect(seen == ["first": "map", "second": "map", "third": "slow", "last": "return", "cleanup": "return"])
        await harness.stop()
    }

    @Test func aQueueRunsAtMostItsConcurrency() async throws {
        let queue = StageQueue(name: "test", concurrency: 3)
        let running = Atomic<Int>(0)
        let peak = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<60 {
            group.enter()
            queue.slot().async {
                let now = running.add(1, ordering: .relaxed).newValue
                _ = peak.max(now, ordering: .relaxed)
                usleep(2_000)
                running.subtract(1, ordering: .relaxed)
                group.leave()
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(peak.load(ordering: .relaxed) <= 3)
        #expect(peak.load(ordering: .relaxed) >= 2, "it does run bodies in parallel")
    }
}
