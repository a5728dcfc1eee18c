import Dispatch
import Foundation
import JobProcesses
import JobStore
import Locking
import Synchronization

/// The stderr of one stage attempt on its way to `stage_logs`: every line,
/// numbered and timed, in batches through the store's writer, within the
/// stage's `logs: { max }`.
///
/// The cap keeps a head and a tail, half of it each. Lines that fit the
/// head are kept for good; after it, the newest lines are kept, and the
/// oldest of them are dropped (deleted if already written) as new ones
/// come, the drop record counting what went. Each line costs its bytes
/// plus ``lineOverhead`` toward the cap, so that memory stays bounded (a
/// few times the cap: lines waiting to be written, and the numbers and
/// sizes of the tail's) however short the lines are.
///
/// At most one batch is in flight: while the store is busy, lines wait here,
/// and the tail keeps dropping its oldest, so a slow database or a flood of
/// output costs neither memory nor a queue of writes. A batch goes
/// ``flushDelay`` after its first line (what `jobctl logs --follow` waits
/// for), or at once past ``flushBytes``; the last goes when the attempt
/// ends, ahead of the stage's result in the same writer's queue.
///
/// Lines stay here until their batch is written, so that a follower on this
/// host (``LiveStageLogs``) gets from ``held(after:)`` every line the
/// database does not have yet.
final class StageLog: OutputLineSink {
    static let lineOverhead = 32
    static let flushDelay: DispatchTimeInterval = .milliseconds(200)
    static let flushBytes = 64 << 10

    let key: StageLogKey
    /// nil: nothing is kept (`logs: { max: 0 }`, or a store without logs);
    /// the mirror still gets the lines.
    private let store: (any StageLogStore)?
    private let headLimit: Int
    private let tailLimit: Int
    private let timers: DispatchQueue
    private let mirror: (any StageLogMirror)?
    /// Where followers on this host find this log while it is written.
    private let live: LiveStageLogs?
    /// Told about the first failed write (later ones are not reported).
    private let onFailure: @Sendable (any Error) -> Void
    private let state = Mutex(State())

    private struct State {
        var nextSequence = 0
        var headCost = 0
        /// The number of the first line past the head, once the head is full.
        var tailStart: Int?
        var pendingHead: [StageLogLine] = []
        /// Tail lines not written yet; those before `pendingTailStart` were dropped.
        var pendingTail: [StageLogLine] = []
        var pendingTailStart = 0
        var pendingCost = 0
        /// The tail's lines (written or not), oldest first from `tailFirst`: number and cost.
        var tail: [(sequence: Int, cost: Int)] = []
        var tailFirst = 0
        var tailCost = 0
        var sentThrough = -1
        /// The number of the last line of the last batch written (or failed).
        var writtenThrough = -1
        /// Lines of the batches in flight, oldest first.
        var inFlight: [StageLogLine] = []
        /// Written tail lines dropped since: delete up to this number.
        var deleteThrough: Int?
        var deletedThrough: Int?
        var droppedLines = 0
        var droppedBytes = 0
        var droppedAt = Date(timeIntervalSince1970: 0)
        var dropChanged = false
        var writing = false
        var timerArmed = false
        var closed = false
        var sentAny = false
        var failed = false
        /// Processes of the attempt still running (their pipes open).
        var processes = 0
        var attemptEnded = false

        var hasPending: Bool {
            !pendingHead.isEmpty || pendingTailStart < pendingTail.count || dropChanged
                || (deleteThrough ?? -1) > (deletedThrough ?? -1)
        }

        mutating func add(_ line: OutputLine, _ stream: StageLogStream, headLimit: Int, tailLimit: Int) {
            let sequence = nextSequence
            nextSequence += 1
            let cost = line.bytes.count + StageLog.lineOverhead
            let stored = StageLogLine(sequence: sequence, at: line.at, bytes: line.bytes, stream: stream)
            if tailStart == nil {
                if headCost + cost <= headLimit {
                    headCost += cost
                    pendingCost += cost
                    pendingHead.append(stored)
                    return
                }
                tailStart = sequence
            }
            tail.append((sequence, cost))
            tailCost += cost
            pendingTail.append(stored)
            pendingCost += cost
            while tailCost > tailLimit, tailFirst < tail.count {
                dropOldest(at: line.at)
            }
            if pendingTailStart > 1024, pendingTailStart * 2 > pendingTail.count {
                pendingTail.removeFirst(pendingTailStart)
                pendingTailStart = 0
            }
            if tailFirst > 4096, tailFirst * 2 > tail.count {
                tail.removeFirst(tailFirst)
                tailFirst = 0
            }
        }

        private mutating func dropOldest(at time: Date) {
            let (sequence, cost) = tail[tailFirst]
            tailFirst += 1
            tailCost -= cost
            droppedLines += 1
            droppedBytes += cost - StageLog.lineOverhead
            droppedAt = time
            dropChanged = true
            if sequence <= sentThrough {
                deleteThrough = sequence
            } else {
                // Not written yet: the first tail line still waiting.
                pendingTailStart += 1
                pendingCost -= cost
            }
        }

        /// What is waiting, as one batch; marks it in flight.
        mutating func takeBatch(_ key: StageLogKey) -> StageLogBatch {
            var lines = pendingHead
            lines += pendingTail[pendingTailStart...]
            var deleting: ClosedRange<Int>?
            if let through = deleteThrough, let start = tailStart, through > (deletedThrough ?? start - 1) {
                deleting = ((deletedThrough ?? start - 1) + 1)...through
                deletedThrough = through
            }
            var dropped: StageLogDrop?
            if dropChanged, let start = tailStart {
                dropped = StageLogDrop(sequence: start, lines: droppedLines, bytes: droppedBytes, at: droppedAt)
            }
            let batch = StageLogBatch(
                key: key, replacesEarlierRun: !sentAny, deleting: deleting, lines: lines, dropped: dropped)
            sentAny = true
            if let last = lines.last { sentThrough = last.sequence }
            inFlight += lines
            pendingHead = []
            pendingTail = []
            pendingTailStart = 0
            pendingCost = 0
            dropChanged = false
            writing = true
            return batch
        }
    }

    /// `limit`: the stage's `logs: { max }` in bytes. `mirror` gets every
    /// line of stderr too, as it is read (the journal), kept or not.
    init(
        key: StageLogKey, limit: Int, store: (any StageLogStore)?, timers: DispatchQueue,
        mirror: (any StageLogMirror)? = nil, live: LiveStageLogs? = nil,
        onFailure: @escaping @Sendable (any Error) -> Void
    ) {
        self.key = key
        self.store = store
        self.live = store == nil ? nil : live
        headLimit = limit / 2
        tailLimit = limit - limit / 2
        self.timers = timers
        self.mirror = mirror
        self.onFailure = onFailure
        self.live?.add(self)
    }

    /// The lines not yet written after `cursor` (those of this attempt after
    /// it, or all if it is before this attempt), and the cursor up to which
    /// the database has this attempt's lines.
    func held(after cursor: StageLogCursor?) -> (from: StageLogCursor, lines: [StageLogEntry]) {
        state.withAnnouncedLock { state in
            let from = StageLogCursor(
                jobAttempt: key.jobAttempt, position: key.position, attempt: key.attempt,
                sequence: state.writtenThrough)
            var after = state.writtenThrough
            if let cursor, cursor > from {
                guard
                    (cursor.jobAttempt, cursor.position, cursor.attempt) == (key.jobAttempt, key.position, key.attempt)
                else { return (from, []) }
                after = cursor.sequence
            }
            var lines: [StageLogEntry] = []
            func take(_ line: StageLogLine) {
                guard line.sequence > after else { return }
                lines.append(
                    StageLogEntry(
                        cursor: StageLogCursor(
                            jobAttempt: key.jobAttempt, position: key.position, attempt: key.attempt,
                            sequence: line.sequence),
                        at: line.at, content: .line(line.bytes), stream: line.stream))
            }
            state.inFlight.forEach(take)
            state.pendingHead.forEach(take)
            state.pendingTail[state.pendingTailStart...].forEach(take)
            return (from, lines)
        }
    }

    /// Lines of stderr (they go to the mirror too).
    func receive(_ lines: [OutputLine]) {
        mirror?.receive(lines)
        keep(lines, .stderr)
    }

    /// Where the stdout lines of the attempt's processes go, for a stage
    /// whose stdout does not become the chain's value (not to the mirror).
    var stdout: any OutputLineSink { StdoutLines(log: self) }

    private struct StdoutLines: OutputLineSink {
        let log: StageLog
        func receive(_ lines: [OutputLine]) { log.keep(lines, .stdout) }
    }

    private func keep(_ lines: [OutputLine], _ stream: StageLogStream) {
        guard store != nil else { return }
        enum Next { case nothing, send(StageLogBatch), armTimer }
        let next = state.withAnnouncedLock { state -> Next in
            guard !state.closed else { return .nothing }
            for line in lines {
                state.add(line, stream, headLimit: headLimit, tailLimit: tailLimit)
            }
            if state.writing { return .nothing }
            if state.pendingCost >= Self.flushBytes { return .send(state.takeBatch(key)) }
            if state.timerArmed || !state.hasPending { return .nothing }
            state.timerArmed = true
            return .armTimer
        }
        live?.changed(key.jobID)
        switch next {
        case .nothing: break
        case let .send(batch): send(batch)
        case .armTimer: armTimer()
        }
    }

    /// A process of the attempt starts: the log stays open for its lines
    /// until ``processEnded()``.
    func processStarted() {
        state.withAnnouncedLock { $0.processes += 1 }
    }

    /// A process of the attempt ended, its pipes read to the end: once the
    /// attempt ended too, the log closes.
    func processEnded() {
        let finished = state.withAnnouncedLock { state -> Bool in
            state.processes -= 1
            return state.processes == 0 && state.attemptEnded
        }
        if finished { finish() }
    }

    /// The attempt ended: writes what waits, ahead of the stage's result
    /// in the writer's queue. A process still running (the loser of a
    /// `race`, or the rest of a failed `when`, being stopped) keeps the log
    /// open for its last lines, which are written when it ends.
    func close() {
        enum Next { case nothing, finish, send(StageLogBatch) }
        let next = state.withAnnouncedLock { state -> Next in
            guard !state.attemptEnded else { return .nothing }
            state.attemptEnded = true
            if state.processes <= 0 { return .finish }
            return state.hasPending ? .send(state.takeBatch(key)) : .nothing
        }
        switch next {
        case .nothing: break
        case .finish: finish()
        case let .send(batch): send(batch)
        }
    }

    /// No more lines come: writes what is left.
    private func finish() {
        mirror?.close()
        let batch = state.withAnnouncedLock { state -> StageLogBatch? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.hasPending ? state.takeBatch(key) : nil
        }
        if let batch {
            send(batch)
        } else if state.withAnnouncedLock({ !$0.writing }) {
            live?.remove(self)
        }
    }

    private func armTimer() {
        timers.asyncAfter(deadline: .now() + Self.flushDelay) { [weak self] in
            self?.timerFired()
        }
    }

    private func timerFired() {
        let batch = state.withAnnouncedLock { state -> StageLogBatch? in
            state.timerArmed = false
            guard !state.closed, !state.writing, state.hasPending else { return nil }
            return state.takeBatch(key)
        }
        if let batch { send(batch) }
    }

    private func send(_ batch: StageLogBatch) {
        guard let store else { return }
        store.writeStageLog(batch) { [self] result in
            enum Next { case nothing, send(StageLogBatch), armTimer }
            var firstFailure = false
            var finished = false
            let next = state.withAnnouncedLock { state -> Next in
                state.writing = false
                if let last = batch.lines.last {
                    state.writtenThrough = max(state.writtenThrough, last.sequence)
                    state.inFlight.removeFirst(state.inFlight.prefix { $0.sequence <= last.sequence }.count)
                }
                if case .failure = result, !state.failed {
                    state.failed = true
                    firstFailure = true
                }
                finished = state.closed && state.inFlight.isEmpty && !state.hasPending
                guard !state.closed, state.hasPending else { return .nothing }
                if state.pendingCost >= Self.flushBytes { return .send(state.takeBatch(key)) }
                if state.timerArmed { return .nothing }
                state.timerArmed = true
                return .armTimer
            }
            if firstFailure, case let .failure(error) = result { onFailure(error) }
            if finished { live?.remove(self) }
            switch next {
            case .nothing: break
            case let .send(batch): send(batch)
            case .armTimer: armTimer()
            }
        }
    }
}
