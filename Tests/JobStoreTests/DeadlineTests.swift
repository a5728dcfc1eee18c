import Foundation
import JobValues
import Locking
import Synchronization
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The race that bounds a pooled call: first the wait for a connection,
/// then, once `body` watches its connection, a query left unanswered on a
/// connection that closed.
@Suite(.timeLimit(.minutes(1))) struct DeadlineTests {
    struct Marker: Error, Equatable { let name: String }

    @Test func theWorksValueWins() async throws {
        let value = try await withDeadline(
            .seconds(5), timedOut: { Marker(name: "timer") }, lost: { Marker(name: "lost") }
        ) { deadline in
            deadline.watch { false }
            return 42
        }
        #expect(value == 42)
    }

    /// (Had the timer not fired, the body would have returned after 30 s.)
    @Test func noConnectionInTimeFailsWithTheTimersError() async throws {
        await #expect(throws: Marker(name: "timer")) {
            try await withDeadline(
                .milliseconds(200), timedOut: { Marker(name: "timer") }, lost: { Marker(name: "lost") }
            ) { _ in
                try await Task.sleep(for: .seconds(30))
            }
        }
    }

    /// A watched call outlives the timeout while its connection is open.
    @Test func aWatchedCallOutlivesTheTimeout() async throws {
        let value = try await withDeadline(
            .milliseconds(100), timedOut: { Marker(name: "timer") }, lost: { Marker(name: "lost") }
        ) { deadline in
            deadline.watch { false }
            try await Task.sleep(for: .milliseconds(1200))
            return "done"
        }
        #expect(value == "done")
    }

    /// The hang PostgresNIO showed: a query never answered, on a connection
    /// that closed. The caller is told the connection was lost, though the
    /// work never returns (without the watch, the suite's time limit ends it).
    @Test func aQueryLeftWaitingOnAClosedConnectionIsGivenUpOn() async throws {
        let closed = Flag()
        let never = NeverAnswered()
        let started = ContinuousClock.now
        let closer = Task {
            try await Task.sleep(for: .milliseconds(300))
            closed.set()
        }
        await #expect(throws: Marker(name: "lost")) {
            try await withDeadline(
                .milliseconds(100), timedOut: { Marker(name: "timer") }, lost: { Marker(name: "lost") }
            ) { deadline in
                deadline.watch { closed.isSet }
                await never.wait()
            }
        }
        let took = ContinuousClock.now - started
        #expect(took >= .milliseconds(300), "not given up on before the connection closed")
        _ = try await closer.value
        never.release()
    }
}

/// A wait that ignores cancellation, as a PostgresNIO query does, until released.
private final class NeverAnswered: Sendable {
    private struct State {
        var released = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withAnnouncedLock { state in
                if !state.released { state.waiters.append(continuation) }
                return state.released
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let waiters = state.withAnnouncedLock { state in
            state.released = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

private final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withAnnouncedLock { $0 = true } }
    var isSet: Bool { value.withAnnouncedLock { $0 } }
}
