import Dispatch
import Synchronization

/// How many pages are made at once, and how many may wait for a turn.
/// A page's reads and its rendering hold memory and a core; beyond these,
/// a request is answered at once that jobd is busy, rather than queued
/// behind seconds of work. Once stopped (jobd's first SIGTERM), waiting
/// and new requests are answered that jobd is stopping.
final class RenderGate: Sendable {
    enum Turn: Sendable {
        case granted
        /// Every place is taken and the queue is full.
        case busy
        case stopping
    }

    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Turn, Never>)] = []
        var nextID: UInt64 = 0
        var stopped = false
        /// Pages let in or queued so far: a settle check scheduled when the
        /// gate went idle sees whether another page came since.
        var arrivals: UInt64 = 0
    }

    let concurrency: Int
    let queueLimit: Int
    /// Called, off the caller's thread, each time the last page being made
    /// is done and none waits.
    let onIdle: @Sendable () -> Void
    /// Called, off the caller's thread, when the gate has stayed idle for
    /// `settleDelay` after a page: once per quiet spell, not per page.
    let onSettled: @Sendable () -> Void
    let settleDelay: DispatchTimeInterval
    private let state = Mutex(State())

    init(
        concurrency: Int, queueLimit: Int, onIdle: @escaping @Sendable () -> Void = {},
        settleDelay: DispatchTimeInterval = .seconds(2), onSettled: @escaping @Sendable () -> Void = {}
    ) {
        self.concurrency = max(1, concurrency)
        self.queueLimit = max(0, queueLimit)
        self.onIdle = onIdle
        self.settleDelay = settleDelay
        self.onSettled = onSettled
    }

    /// `body` once a place is free, or `refused(turn)` when none will be.
    /// A request whose task is cancelled while it waits is refused as stopping.
    func run<T: Sendable>(_ body: () async -> T, refused: (Turn) -> T) async -> T {
        let turn = await enter()
        guard case .granted = turn else { return refused(turn) }
        defer { leave() }
        return await body()
    }

    private func enter() async -> Turn {
        enum Immediate { case turn(Turn), wait(UInt64) }
        let immediate = state.withLock { state -> Immediate in
            if state.stopped { return .turn(.stopping) }
            if state.running < concurrency {
                state.running += 1
                state.arrivals += 1
                return .turn(.granted)
            }
            if state.waiting.count >= queueLimit { return .turn(.busy) }
            state.arrivals += 1
            defer { state.nextID += 1 }
            return .wait(state.nextID)
        }
        guard case .wait(let id) = immediate else {
            if case .turn(let turn) = immediate { return turn }
            return .busy
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Turn? in
                    if state.stopped { return .stopping }
                    if state.running < concurrency {
                        state.running += 1
                        return .granted
                    }
                    state.waiting.append((id, continuation))
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Turn, Never>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(returning: .stopping)
        }
    }

    private func leave() {
        let (next, idleAfter) = state.withLock { state -> (CheckedContinuation<Turn, Never>?, UInt64?) in
            guard !state.stopped, !state.waiting.isEmpty else {
                state.running -= 1
                return (nil, state.running == 0 ? state.arrivals : nil)
            }
            // The place passes to the first waiter: `running` stays.
            return (state.waiting.removeFirst().continuation, nil)
        }
        next?.resume(returning: .granted)
        guard let arrivals = idleAfter else { return }
        DispatchQueue.global(qos: .utility).async(execute: onIdle)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + settleDelay) { [self] in
            let settled = state.withLock { $0.running == 0 && $0.arrivals == arrivals }
            if settled { onSettled() }
        }
    }

    /// Requests waiting for a place now.
    var waiting: Int { state.withLock { $0.waiting.count } }

    /// Refuses every waiting and later request; pages being made finish.
    func stop() {
        let waiting = state.withLock { state in
            state.stopped = true
            defer { state.waiting = [] }
            return state.waiting.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: .stopping) }
    }
}
