import JobControl
import JobEngine
import Locking
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP reloads; the first SIGTERM or SIGINT shuts the group down
/// gracefully (the engine drains within `shutdown-grace`), a second one
/// ends the running stages at once. First in the group, so that it is shut
/// down last and still hears that second signal while the engine drains.
final class SignalService: Service, Sendable, CustomStringConvertible {
    let daemon: Daemon
    /// The group to shut down; set once it exists, before it runs.
    let group = Mutex<ServiceGroup?>(nil)

    init(daemon: Daemon) {
        self.daemon = daemon
    }

    var description: String { "signals: SIGHUP reloads, SIGTERM and SIGINT stop" }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup, .sigterm, .sigint)
        // Listening now: what arrived before is handled first.
        for signal in SignalWatcher.takeEarly() { await handle(signal) }
        await cancelWhenGracefulShutdown {
            for await signal in signals { await self.handle(signal.rawValue) }
        }
    }

    private func handle(_ signal: Int32) async {
        if signal == SIGHUP {
            daemon.reload()
        } else if daemon.beginStopping(signal: SignalWatcher.name(signal)) {
            await group.withAnnouncedLock { $0 }?.triggerGracefulShutdown()
        }
    }
}

/// The control socket, served until the group shuts down (after the engine
/// drained: `jobctl daemon` answers while jobd stops).
struct ControlService: Service, CustomStringConvertible {
    let server: ControlServer

    var description: String { "control socket \(server.path)" }

    func run() async throws {
        server.start()
        try? await gracefulShutdown()
        server.stop()
    }
}

/// The engine: started with the group once jobs left by a dead jobd of this
/// node are taken up, fed the store's wake-ups, drained when it shuts down.
struct EngineService: Service, CustomStringConvertible {
    let daemon: Daemon

    var description: String { "engine" }

    func run() async throws {
        // With a listener asked for, jobd is ready once it listens; one that
        // cannot stops jobd before any job starts.
        guard await cancelWhenGracefulShutdown({ await daemon.listenerStarted.wait() }) else {
            try? await gracefulShutdown()
            return
        }
        await daemon.recover()
        daemon.engine.start()
        await daemon.announceReady()
        await withDiscardingTaskGroup { group in
            // What other hosts did (PostgreSQL's NOTIFY): claims and cancels at once.
            group.addTask { await daemon.engine.followWakeUps() }
            // Returns when the group shuts down (or is cancelled).
            try? await gracefulShutdown()
            await daemon.drain()
            group.cancelAll()
        }
    }
}

/// A chore run every `interval` (the first time after `firstAfter`) until
/// the group shuts down. A chore that throws ends jobd (the group shuts
/// down gracefully).
struct PeriodicChore: Service, CustomStringConvertible {
    let name: String
    let interval: Duration
    var firstAfter: Duration?
    let body: @Sendable () async throws -> Void

    init(
        name: String, interval: Duration, firstAfter: Duration? = nil, body: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.interval = interval
        self.firstAfter = firstAfter
        self.body = body
    }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await Task.sleep(for: firstAfter ?? interval)
                while true {
                    try await body()
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            // The group is shutting down: the chore simply stops.
        }
    }

    var description: String { "chore: \(name), every \(interval)" }
}

/// Whether something that starts once started: `wait()` returns its
/// outcome, at once when it is known, or false if the waiting task is
/// cancelled first.
final class StartSignal: Sendable {
    private struct State {
        var outcome: Bool?
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state: Mutex<State>

    /// - Parameter outcome: known from the start (nothing to wait for), or nil.
    init(outcome: Bool? = nil) {
        state = Mutex(State(outcome: outcome))
    }

    /// Records the outcome (the first one stands) and wakes every waiter.
    func finish(_ outcome: Bool) {
        let (settled, waiters) = state.withAnnouncedLock { state in
            if state.outcome == nil { state.outcome = outcome }
            defer { state.waiters = [:] }
            return (state.outcome ?? outcome, Array(state.waiters.values))
        }
        for waiter in waiters { waiter.resume(returning: settled) }
    }

    func wait() async -> Bool {
        let id = state.withAnnouncedLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let known = state.withAnnouncedLock { state -> Bool? in
                    if let outcome = state.outcome { return outcome }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let known { continuation.resume(returning: known) }
            }
        } onCancel: {
            let waiter = state.withAnnouncedLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: false)
        }
    }
}
