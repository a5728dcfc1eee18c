import Dispatch
import Foundation
import Synchronization
import Testing

@testable import JobDashboard
@testable import JobStore

/// Pages are made a few at a time; a bounded number wait, and stopping
/// answers the waiting ones at once.
@Suite struct RenderGateTests {
    /// A dashboard of one job whose pages are rendered on `queue`.
    func dashboard(on queue: DispatchQueue, concurrent: Int, waiting: Int) -> Dashboard {
        let job = makeJob(1)
        let source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: [makeStage(0)])])
        return Dashboard(source: source, renderQueue: queue, concurrentPages: concurrent, waitingPages: waiting)
    }

    /// Waits until `count` requests wait for a turn.
    func untilWaiting(_ dashboard: Dashboard, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while dashboard.gate.waiting < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(dashboard.gate.waiting == count)
    }

    @Test func aRequestBeyondTheQueueIsAnsweredBusyAtOnce() async throws {
        let queue = DispatchQueue(label: "test.render.busy")
        let release = DispatchSemaphore(value: 0)
        queue.async { release.wait() }
        let dashboard = dashboard(on: queue, concurrent: 1, waiting: 1)
        let first = Task { await dashboard.jobPage(id: "1") }
        let second = Task { await dashboard.jobPage(id: "1") }
        try await untilWaiting(dashboard, 1)
        let third = await dashboard.jobPage(id: "1")
        #expect(third.status == .unavailable)
        #expect(third.html.contains("1 pages are being made and 1 more wait"))
        release.signal()
        #expect(await first.value.status == .ok)
        #expect(await second.value.status == .ok)
    }

    @Test func stoppingAnswersTheWaitingRequestsAtOnce() async throws {
        let queue = DispatchQueue(label: "test.render.stop")
        let release = DispatchSemaphore(value: 0)
        queue.async { release.wait() }
        let dashboard = dashboard(on: queue, concurrent: 1, waiting: 8)
        let rendering = Task { await dashboard.jobPage(id: "1") }
        let waiting = (0..<3).map { _ in Task { await dashboard.jobPage(id: "1") } }
        try await untilWaiting(dashboard, 3)
        dashboard.stop()
        // Answered while the page being rendered is still held.
        for page in waiting {
            let answer = await page.value
            #expect(answer.status == .unavailable)
            #expect(answer.html.contains("jobd is stopping"))
        }
        #expect(await dashboard.schedulesPage().html.contains("jobd is stopping"), "and a later one")
        release.signal()
        #expect(await rendering.value.status == .ok, "the page being made finishes")
    }

    /// Waits for `semaphore` on a Dispatch thread, not one of Swift's few
    /// cooperative ones.
    func waitOffThePool(_ semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    /// Counts `onSettled` calls.
    final class Settles: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }

        /// Waits until the count reaches `expected`, up to 10 s.
        func until(_ expected: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while value < expected, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    @Test func aQuietSpellAfterPagesIsAnnouncedOnce() async throws {
        let settles = Settles()
        let gate = RenderGate(concurrency: 2, queueLimit: 4, settleDelay: .milliseconds(100)) { settles.add() }
        // Two pages at once: the gate is idle only after the second.
        let held = DispatchSemaphore(value: 0)
        async let first: Void = gate.run({ await waitOffThePool(held) }, refused: { _ in })
        async let second: Void = gate.run({ await waitOffThePool(held) }, refused: { _ in })
        try await Task.sleep(for: .milliseconds(300))
        #expect(settles.value == 0, "announced while two pages were being made")
        held.signal()
        held.signal()
        _ = await (first, second)
        try await settles.until(1)
        try await Task.sleep(for: .milliseconds(300))
        #expect(settles.value == 1)
    }

    @Test func aPageWithinTheDelayPostponesTheAnnouncement() async throws {
        let settles = Settles()
        let gate = RenderGate(concurrency: 1, queueLimit: 4, settleDelay: .seconds(1)) { settles.add() }
        await gate.run({}, refused: { _ in })
        // Comes and goes well within the delay: the check the first page
        // left finds that a page came since and stays silent; the one this
        // page leaves announces the quiet spell.
        await gate.run({}, refused: { _ in })
        try await settles.until(1)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(settles.value == 1)
    }
}
