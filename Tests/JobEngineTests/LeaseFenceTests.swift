import Testing

@testable import JobEngine

/// A host that cannot renew a lease stops the job's processes — SIGTERM,
/// then SIGKILL after the fence's grace — before the lease can expire.
@Suite struct LeaseFenceTests {
    @Test(arguments: [
        (Duration.seconds(3), Duration.seconds(1)),
        (.seconds(30), .seconds(5)),
        (.seconds(30), .seconds(60)),
        (.seconds(4), .zero),
    ])
    func theLastCheckAndTheGraceEndBeforeTheLeaseCanExpire(lease: Duration, killGrace: Duration) {
        let fence = LeaseFence(lease: lease, killGrace: killGrace)
        // The latest SIGKILL: a check just short of stopAfter, then one interval later, then the grace.
        let lastKill = fence.stopAfter + fence.checkInterval + fence.grace
        #expect(lastKill < lease)
        #expect(lease - lastKill == fence.margin)
        #expect(fence.grace <= killGrace)
        #expect(fence.stopAfter >= lease / 2, "a short outage does not stop every stage")
    }

    @Test func aRunIsStoppedOnceItsLeaseWentUnconfirmedForStopAfter() {
        let fence = LeaseFence(lease: .seconds(3), killGrace: .seconds(1))
        #expect(fence.stopAfter == .seconds(2))
        #expect(fence.grace == .milliseconds(500))
        let confirmed = ContinuousClock.now
        #expect(!fence.mustStop(confirmed: confirmed, now: confirmed + .milliseconds(1_999)))
        #expect(fence.mustStop(confirmed: confirmed, now: confirmed + .seconds(2)))
    }
}
