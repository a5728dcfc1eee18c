import Foundation
import JobConfig
import JobEngine
import JobStore
import JobValues
import Locking
import Logging
import ServiceLifecycle
import Synchronization

/// The chores one jobd at a time does among all those sharing a database —
/// requeueing the jobs of leases that expired (their runner died) and
/// pruning — under the `maintenance` leader lease (`leaders` table), which
/// another jobd takes over when its holder stops (at once: it lets go) or
/// dies (once the lease of 30 s ran out). Also where jobd notices, and
/// logs, that the database stopped or started answering.
final class Maintenance: Sendable {
    static let role = "maintenance"
    /// How long the leader lease lasts unless renewed; renewed every round.
    static let leaderLease = Duration.seconds(30)
    /// The first pruning, then every hour.
    static let firstPrune = Duration.seconds(60)
    static let pruneInterval = Duration.seconds(3600)

    struct State {
        var leader = false
        var unavailableSince: ContinuousClock.Instant?
        var nextPrune = ContinuousClock.now + Maintenance.firstPrune
    }

    let state = Mutex(State())

    /// A round every poll interval, at most every 10 s: well inside the lease.
    static func interval(pollInterval: Duration) -> Duration {
        min(pollInterval, .seconds(10))
    }
}

extension Daemon {
    /// Before the engine claims anything: jobs left running by a jobd of
    /// this node whose process is gone (killed, crashed) have their leases
    /// ended at once; then a maintenance round requeues them, if this jobd
    /// leads. Jobs of runners that may be alive are left to them until
    /// their leases run out.
    func recover() async {
        let node = state.withAnnouncedLock { $0.config.node }
        do {
            let owners = try await store.leaseOwners()
            let dead = owners.keys.filter { LeaseOwner.isDeadLocalProcess($0, node: node) }.sorted()
            if !dead.isEmpty {
                let ended = try await store.expireLeases(of: dead)
                // One of them may have led: the role is free at once rather than in 30 s.
                for owner in dead { try await store.releaseLeadership(of: Maintenance.role, owner: owner) }
                logger.notice("taking up \(ended) job(s) of stopped runner(s) \(dead.joined(separator: ", "))")
            }
            let alive = owners.keys.filter { !dead.contains($0) }.sorted()
            if !alive.isEmpty {
                logger.info("jobs held by other runners are left to them until their leases expire: \(alive.joined(separator: ", "))")
            }
        } catch {
            logger.error("crash recovery failed: \(error); jobs left running resume when their leases expire")
        }
        await maintain()
    }

    /// One maintenance round: take or keep the leader lease; as leader,
    /// requeue the jobs of expired leases (and claim them at once), and
    /// prune when it is time.
    func maintain() async {
        do {
            let leader = try await store.acquireLeadership(of: Maintenance.role, owner: owner, for: Maintenance.leaderLease)
            noteAnswered(leader: leader)
            guard leader else { return }
            let requeued = try await store.requeueExpiredLeases()
            if !requeued.isEmpty {
                logger.notice("requeued \(requeued.count) job(s) whose runner stopped renewing its lease: \(requeued.prefix(20).map(String.init).joined(separator: ", ")); each resumes at its first stage without a fulfilled result")
                engine.nudge()
            }
            try await pruneIfDue()
        } catch {
            noteFailed(error)
        }
    }

    private func pruneIfDue() async throws {
        let due = maintenance.state.withAnnouncedLock { state -> Bool in
            guard ContinuousClock.now >= state.nextPrune else { return false }
            state.nextPrune = ContinuousClock.now + Maintenance.pruneInterval
            return true
        }
        guard due, case let .duration(retention) = state.withAnnouncedLock({ $0.config.store.retention }) else { return }
        let pruned = try await store.prune(olderThan: retention)
        if pruned > 0 { logger.info("pruned \(pruned) resolved job(s) older than \(retention.jobdText)") }
    }

    private func noteAnswered(leader: Bool) {
        let (was, downSince) = maintenance.state.withAnnouncedLock { state in
            defer {
                state.leader = leader
                state.unavailableSince = nil
            }
            return (state.leader, state.unavailableSince)
        }
        if let downSince {
            let seconds = (ContinuousClock.now - downSince).components.seconds
            logger.notice("the database answers again (after about \(seconds)s); jobs that waited for it go on")
        }
        if leader != was {
            logger.info(leader ? "leading maintenance (requeueing the jobs of expired leases, pruning) as \(owner)"
                               : "no longer leading maintenance: another jobd took it")
        }
    }

    private func noteFailed(_ error: any Error) {
        let retryable = (error as? JobStoreError)?.code.isRetryable ?? false
        let first = maintenance.state.withAnnouncedLock { state -> Bool in
            guard retryable else { return true }
            defer { if state.unavailableSince == nil { state.unavailableSince = .now } }
            return state.unavailableSince == nil
        }
        guard first else { return }
        if retryable {
            logger.warning("the database is unavailable: \(Self.message(error)); jobd keeps running, its jobs wait for the database, and it tries again")
        } else {
            logger.warning("maintenance failed: \(error)")
        }
    }

    /// Lets the leader lease go (shutdown), so another jobd takes it at once.
    func resignLeadership() async {
        let leader = maintenance.state.withAnnouncedLock { state -> Bool in
            defer { state.leader = false }
            return state.leader
        }
        guard leader else { return }
        do {
            try await store.releaseLeadership(of: Maintenance.role, owner: owner)
        } catch {
            logger.warning("could not let the maintenance lease go (another jobd takes it once it expires): \(error)")
        }
    }
}

/// Maintenance rounds until the group shuts down; then the leader lease is
/// let go. Listed after the engine, so it stops first, while the store runs.
struct MaintenanceService: Service, CustomStringConvertible {
    let daemon: Daemon

    var description: String { "maintenance (leader only: requeue expired leases, prune)" }

    func run() async throws {
        let interval = Maintenance.interval(pollInterval: daemon.state.withAnnouncedLock { $0.config.pollInterval })
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                await daemon.maintain()
            }
        }
        await daemon.resignLeadership()
    }
}
