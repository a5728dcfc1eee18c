import Dispatch
import Foundation
import JobStore
import JobValues
import Locking
import Synchronization

/// What a follower on the host that runs a job reads of its stage logs
/// (`jobctl logs --follow` through the control socket): the lines the
/// engine holds that may not be in the database yet.
public struct LiveStageLogRead: Sendable {
    /// This engine runs the job now. When false, the job's lines are all
    /// in the database (or on their way from another host).
    public var running: Bool
    /// Every line after this cursor that is not in the database is among
    /// `lines`; lines up to it are in the database. A follower whose cursor
    /// is before it reads the database after its cursor first. nil: the
    /// engine holds no line of the job, so the database has them all.
    public var memoryFrom: StageLogCursor?
    /// The lines held after the asked cursor, in order; only
    /// ``StageLogEntry/Content/line`` entries. At most about
    /// ``LiveStageLogs/replyBytes`` of them: ask again after the last.
    public var lines: [StageLogEntry]

    public init(running: Bool, memoryFrom: StageLogCursor? = nil, lines: [StageLogEntry] = []) {
        self.running = running
        self.memoryFrom = memoryFrom
        self.lines = lines
    }
}

/// The stage logs of the attempts running in one engine, by job, and the
/// followers waiting for their next lines.
///
/// A ``StageLog`` is listed from its attempt's start until its last batch
/// is written, so the lines of a job are at every moment in the database,
/// in a listed log, or both; a follower that reads the database up to
/// ``LiveStageLogRead/memoryFrom`` and then the lines given here misses
/// none and, going by the cursor, prints none twice.
final class LiveStageLogs: Sendable {
    /// The line bytes one read gives at most (a reply stays small; the
    /// follower asks again at once).
    static let replyBytes = 512 << 10

    private struct Waiter {
        let number: UInt64
        let wake: @Sendable () -> Void
    }

    private struct State {
        var logs: [Int64: [ObjectIdentifier: StageLog]] = [:]
        var waiters: [Int64: [Waiter]] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let timers = DispatchQueue(label: "jobd.engine.log-followers")

    func add(_ log: StageLog) {
        let waiters = state.withAnnouncedLock { state -> [Waiter] in
            state.logs[log.key.jobID, default: [:]][ObjectIdentifier(log)] = log
            return state.waiters.removeValue(forKey: log.key.jobID) ?? []
        }
        for waiter in waiters { waiter.wake() }
    }

    func remove(_ log: StageLog) {
        let waiters = state.withAnnouncedLock { state -> [Waiter] in
            let id = log.key.jobID
            state.logs[id]?.removeValue(forKey: ObjectIdentifier(log))
            if state.logs[id]?.isEmpty == true { state.logs.removeValue(forKey: id) }
            return state.waiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.wake() }
    }

    /// New lines, or a change in what job `id` runs (its end): wakes its
    /// followers. Cheap when nobody follows.
    func changed(_ id: Int64) {
        let waiters = state.withAnnouncedLock { $0.waiters.removeValue(forKey: id) ?? [] }
        for waiter in waiters { waiter.wake() }
    }

    /// The held lines of job `id` after `cursor`. If there are none and the
    /// job runs here, waits up to `wait` for lines or for a change (a stage
    /// attempt starting or ending, the job ending) before answering.
    func read(
        _ id: Int64, after cursor: StageLogCursor?, wait: Duration, running: @escaping @Sendable () -> Bool,
        reply: @escaping @Sendable (LiveStageLogRead) -> Void
    ) {
        let first = state.withAnnouncedLock { state -> LiveStageLogRead? in
            let read = Self.snapshot(state.logs[id], after: cursor, running: running())
            guard read.running, read.lines.isEmpty, wait > .zero else { return read }
            // Registered under the same lock as the snapshot: a line that
            // comes after the snapshot wakes this waiter.
            let number = state.nextWaiter
            state.nextWaiter += 1
            state.waiters[id, default: []].append(
                Waiter(number: number) { [self] in
                    reply(
                        self.state.withAnnouncedLock { Self.snapshot($0.logs[id], after: cursor, running: running()) })
                })
            timers.asyncAfter(deadline: .now() + wait.dispatchInterval) { [self] in
                let waiter = self.state.withAnnouncedLock { state -> Waiter? in
                    guard let index = state.waiters[id]?.firstIndex(where: { $0.number == number }) else { return nil }
                    let waiter = state.waiters[id]?.remove(at: index)
                    if state.waiters[id]?.isEmpty == true { state.waiters.removeValue(forKey: id) }
                    return waiter
                }
                waiter?.wake()
            }
            return nil
        }
        if let first { reply(first) }
    }

    private static func snapshot(
        _ logs: [ObjectIdentifier: StageLog]?, after cursor: StageLogCursor?, running: Bool
    ) -> LiveStageLogRead {
        guard let logs, !logs.isEmpty else { return LiveStageLogRead(running: running) }
        var memoryFrom: StageLogCursor?
        var lines: [StageLogEntry] = []
        for log in logs.values {
            let held = log.held(after: cursor)
            memoryFrom = min(memoryFrom ?? held.from, held.from)
            lines += held.lines
        }
        lines.sort { $0.cursor < $1.cursor }
        var bytes = 0
        if let cut = lines.firstIndex(where: { entry in
            if case let .line(line) = entry.content { bytes += line.count }
            return bytes > replyBytes
        }), cut > 0 {
            lines.removeSubrange(cut...)
        }
        return LiveStageLogRead(running: running, memoryFrom: memoryFrom, lines: lines)
    }
}

extension Engine {
    /// The lines of job `id` this engine holds after `cursor` (see
    /// ``LiveStageLogRead``), waiting up to `wait` for new ones while the
    /// job runs here. `reply` is called once: at once when there is
    /// something to say, else from the thread of the change or the timer.
    public func followStageLog(
        _ id: Int64, after cursor: StageLogCursor?, wait: Duration,
        reply: @escaping @Sendable (LiveStageLogRead) -> Void
    ) {
        context.liveLogs.read(
            id, after: cursor, wait: wait,
            running: { [weak self] in
                self.map { !$0.runs(of: id).isEmpty } ?? false
            }, reply: reply)
    }
}
