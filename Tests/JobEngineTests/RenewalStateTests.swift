import Foundation
import JobStore
import JobStoreSQLite
import Logging
import Testing

@testable import JobEngine

/// The log says what changed about lease renewals, not the same line at
/// every renewal: a failure once, then its end; a lease a locked row held
/// up once, then its renewal.
@Suite struct RenewalStateTests {
    struct Down: Error, CustomStringConvertible {
        var description: String { "the database is unavailable" }
    }

    func lease(_ id: Int64) -> Lease {
        Lease(jobID: id, owner: "host-a/1/x", claim: 1, expiresAt: Date())
    }

    @Test func aFailureIsLoggedOnceAndItsEndOnce() {
        var state = RenewalState()
        let start = ContinuousClock.now
        let first = state.finished(.failure(Down()), now: start)
        #expect(first.count == 1 && first[0].level == .error)
        #expect(first[0].message.contains("the database is unavailable"))
        for second in 1...14 {
            #expect(state.finished(.failure(Down()), now: start + .seconds(second)).isEmpty)
        }
        let back = state.finished(
            .success(LeaseRenewal(renewed: [lease(1)], lost: [], cancellationRequested: [])), now: start + .seconds(20))
        #expect(back.count == 1 && back[0].level == .notice && back[0].message.contains("after 20s"), "\(back)")
        #expect(
            state.finished(.success(LeaseRenewal(renewed: [lease(1)], lost: [], cancellationRequested: []))).isEmpty)
    }

    /// Held up at two renewals in a row: told once, and once renewed again.
    /// Held up at one only (this jobd's writer finishing the job) is not told.
    @Test func aLeaseHeldUpIsToldOnceAndItsRenewalOnce() {
        var state = RenewalState()
        let held = LeaseRenewal(renewed: [lease(2)], lost: [], cancellationRequested: [], heldUp: [1])
        let both = LeaseRenewal(renewed: [lease(1), lease(2)], lost: [], cancellationRequested: [])
        #expect(state.finished(.success(held)).isEmpty, "once: a moment's lock")
        #expect(state.finished(.success(both)).isEmpty)
        #expect(state.finished(.success(held)).isEmpty)
        let second = state.finished(.success(held))
        #expect(second.count == 1 && second[0].level == .warning && second[0].job == 1)
        #expect(state.finished(.success(held)).isEmpty)
        let renewed = state.finished(.success(both))
        #expect(renewed.count == 1 && renewed[0].job == 1 && renewed[0].message.contains("renewed again"))
        #expect(state.finished(.success(held)).isEmpty)
        #expect(state.finished(.success(held)).count == 1, "held up again: told again")
    }
}
