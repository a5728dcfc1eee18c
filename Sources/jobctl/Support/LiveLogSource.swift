import Foundation
import JobControl
import JobStore

/// jobd on this host, as `jobctl logs --follow` asks it for the lines of a
/// job it runs (see the control socket's `logs`): lines come as they are
/// written, not after their batch reached the database.
struct LiveLogSource {
    let socketPath: String
    /// How long jobd may wait for a new line before it answers.
    var wait: Duration = .seconds(1)
    /// Off after an answer that says this jobd cannot serve `logs` (one
    /// from before the command, or a refusal): the database is read instead.
    private(set) var usable = true

    /// Stops asking jobd: the database is read from now on.
    mutating func stop() { usable = false }

    init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// What jobd holds of job `id` after `cursor`; nil when no jobd
    /// answers here (none runs, or it cannot be asked).
    mutating func read(_ id: Int64, after cursor: StageLogCursor?) -> LiveLogs? {
        guard usable else { return nil }
        let request = ControlRequest(
            .logs, job: id, after: cursor.map(LogCursor.init),
            waitMilliseconds: Int(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000))
        do {
            return try ControlClient.send(request, to: socketPath).logs
        } catch  where error.code == .notRunning {
            return nil
        } catch {
            usable = false
            return nil
        }
    }
}

extension LogCursor {
    init(_ cursor: StageLogCursor) {
        self.init(
            jobAttempt: cursor.jobAttempt, position: cursor.position, attempt: cursor.attempt,
            sequence: cursor.sequence)
    }
}

extension StageLogCursor {
    init(_ cursor: LogCursor) {
        self.init(
            jobAttempt: cursor.jobAttempt, position: cursor.position, attempt: cursor.attempt,
            sequence: cursor.sequence)
    }
}

extension StageLogEntry {
    init(_ line: LogLine) {
        self.init(
            cursor: StageLogCursor(line.cursor), at: Date(timeIntervalSince1970: line.at),
            content: .line([UInt8](line.line)), stream: line.stream.flatMap(StageLogStream.init) ?? .stderr)
    }
}
