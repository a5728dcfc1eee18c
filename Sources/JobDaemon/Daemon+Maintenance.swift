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
/// dies (once its lease, as long as the jobs' `lease`, ran out). Also where
/// jobd notices, and logs, that the database stopped or started answering.
final class Maintenance: Sendable {
    static let role = "maintenance"
    /// The first pruning, then every hour.
    static let firstPrune = Duration.seconds(60)
    static let pruneInterval = Duration.seconds(3600)
    /// How long jobd waits for the database to let the leader lease go at
    /// its stop (then another jobd takes it once it expires).
    static let resignLimit = Duration.seconds(2)

    struct State {
        var leader = false
        var unavailableSince: ContinuousClock.Instant?
        /// After the database did not answer for a while: no requeueing before this.
        var requeueAfter: ContinuousClock.Instant?
        var nextPrune = ContinuousClock.now + Maintenance.firstPrune
    }

    let state = Mutex(State())
    /// Steps of the wall clock between rounds: after one forward, every
    /// live lease looks expired until its runner renews it.
    let clockSteps = WallClockSteps(wall: { Date() })

    /// How long the leader lease lasts unless renewed (every round): the
    /// jobs' lease, so that the role passes on from a leader that died as
    /// soon as its jobs do, and those jobs are requeued as fast as any
    /// other dead host's.
    static func leaderLease(lease: Duration) -> Duration {
        lease
    }

    /// A round every poll interval, at most every 10 s and every third of
    /// the lease: well inside the leader lease.
    static func interval(pollInterval: Duration, lease: Duration) -> Duration {
        min(pollInterval, .seconds(10), lease / 3)
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
            let dead = owners.keys.filter { LeaseOwner.isDeadLocalProcess($0, node: node, ownOwner: owner) }.sorted()
            if !dead.isEmpty {
                let ended = try await store.expireLeases(of: dead)
                // One of them may have led: the role is free at once rather than in 30 s.
                for owner in dead { try await store.releaseLeadership(of: Maintenance.role, owner: owner) }
                logger.notice("taking up \(ended) job(s) of stopped runner(s) \(dead.joined(separator: ", "))")
            }
            let alive = owners.keys.filter { !dead.contains($0) }.sorted()
            if !alive.isEmpty {
                logger.info(
                    "jobs held by other runners are left to them until their leases expire: \(alive.joined(separator: ", "))"
                )
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
        let lease = state.withAnnouncedLock { $0.config.lease }
        do {
            let leader = try await store.acquireLeadership(
                of: Maintenance.role, owner: owner, for: Maintenance.leaderLease(lease: lease))
            noteAnswered(leader: leader, lease: lease)
            noteClockStep(lease: lease)
            guard leader else { return }
            // The database answers again after a while: so may the other
            // hosts' connections, a moment later. Their leases expired
            // meanwhile; they get a lease's time to renew before they count as dead.
            let waiting = maintenance.state.withAnnouncedLock { state -> Bool in
                guard let after = state.requeueAfter else { return false }
                if ContinuousClock.now >= after { state.requeueAfter = nil }
                return state.requeueAfter != nil
            }
            guard !waiting else { return }
            // This jobd's own running jobs are alive whatever their expiry reads.
            let requeued = try await store.requeueExpiredLeases(sparing: engine.runningLeases)
            if !requeued.isEmpty {
                logger.notice(
                    "requeued \(requeued.count) job(s) whose runner stopped renewing its lease: \(requeued.prefix(20).map(String.init).joined(separator: ", ")); each resumes at its first stage without a fulfilled result"
                )
                engine.nudge()
            }
            try await pruneIfDue()
        } catch {
            noteFailed(error)
        }
    }

    /// After the wall clock stepped forward (or the machine slept), every
    /// lease looks expired until its runner renews it: the other jobds get a
    /// lease's time to do so before any is requeued, and pruning waits an
    /// hour, in case the clock was set wrong and is set back.
    private func noteClockStep(lease: Duration) {
        guard let step = maintenance.clockSteps.look().step, step > 0 else { return }
        maintenance.state.withAnnouncedLock { state in
            state.requeueAfter = max(state.requeueAfter ?? .now, .now + lease)
            state.nextPrune = max(state.nextPrune, .now + Maintenance.pruneInterval)
        }
        logger.warning(
            "the clock moved forward by \(WallClockSteps.text(step)) (a clock step or a suspend): expired leases are requeued once \(lease.jobdText) has passed, so that live runners renew theirs first; pruning waits an hour"
        )
    }

    private func pruneIfDue() async throws {
        let due = maintenance.state.withAnnouncedLock { state -> Bool in
            guard ContinuousClock.now >= state.nextPrune else { return false }
            state.nextPrune = ContinuousClock.now + Maintenance.pruneInterval
            return true
        }
        guard due, case let .duration(retention) = state.withAnnouncedLock({ $0.config.store.retention }) else {
            return
        }
        let pruned = try await store.prune(olderThan: retention)
        if pruned > 0 { logger.info("pruned \(pruned) resolved job(s) older than \(retention.jobdText)") }
    }

    private func noteAnswered(leader: Bool, lease: Duration) {
        let (was, downSince) = maintenance.state.withAnnouncedLock { state in
            defer {
                state.leader = leader
                if state.unavailableSince != nil { state.requeueAfter = .now + lease }
                state.unavailableSince = nil
            }
            return (state.leader, state.unavailableSince)
        }
        if let downSince {
            let seconds = (ContinuousClock.now - downSince).components.seconds
            logger.notice(
                "the database answers again (after about \(seconds)s); jobs that waited for it go on. Expired leases are requeued once \(lease.jobdText) has passed, so that other hosts cut off too can renew theirs first"
            )
        }
        if leader != was {
            logger.info(
                leader
                    ? "leading maintenance (requeueing the jobs of expired leases, pruning) as \(owner)"
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
            logger.warning(
                "the database is unavailable: \(Self.message(error)); jobd keeps running, its jobs wait for the database, and it tries again"
            )
        } else {
            logger.warning("maintenance failed: \(error)")
        }
    }

    /// Lets the leader lease go (shutdown), so another jobd takes it at
    /// once; waits for that at most ``Maintenance/resignLimit``, and not at
    /// all while the database does not answer.
    func resignLeadership() async {
        let (leader, down) = maintenance.state.withAnnouncedLock { state -> (Bool, Bool) in
            defer { state.leader = false }
            return (state.leader, state.unavailableSince != nil)
        }
        guard leader else { return }
        let why: String
        if down {
            why = "the database does not answer"
        } else {
            let (store, owner) = (self.store, self.owner)
            let outcome = await awaitAtMost(Maintenance.resignLimit) { () -> String? in
                do {
                    try await store.releaseLeadership(of: Maintenance.role, owner: owner)
                    return nil
                } catch {
                    return Daemon.message(error)
                }
            }
            switch outcome {
            case .some(nil): return
            case let .some(.some(message)): why = message
            case .none: why = "no answer within \(Maintenance.resignLimit.jobdText)"
            }
        }
        logger.warning("could not let the maintenance lease go (\(why)); another jobd takes it once it expires")
    }
}

/// Maintenance rounds until the group shuts down; then the leader lease is
/// let go. Listed after the engine, so it stops first, while the store runs.
struct MaintenanceService: Service, CustomStringConvertible {
    let daemon: Daemon

    var description: String { "maintenance (leader only: requeue expired leases, prune)" }

    func run() async throws {
        let interval = daemon.state.withAnnouncedLock {
            Maintenance.interval(pollInterval: $0.config.pollInterval, lease: $0.config.lease)
        }
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                await daemon.maintain()
            }
        }
        await daemon.resignLeadership()
    }
}
