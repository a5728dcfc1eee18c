import Dispatch
import Foundation
@testable import JobDashboard
@testable import JobStore
import Testing

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
}
