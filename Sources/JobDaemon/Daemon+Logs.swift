import Foundation
import JobControl
import JobEngine
import JobStore

extension Daemon {
    /// `logs`: the lines of a job this jobd runs that may not be in the
    /// database yet, for `jobctl logs --follow` on this host.
    func answerLogs(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        guard let id = request.job, id > 0 else {
            let given = request.job.map { " (got \($0))" } ?? ""
            reply(
                ControlReply(
                    ok: false,
                    error:
                        "logs needs \"job\": the id of a job, a positive integer\(given), as in {\"command\":\"logs\",\"job\":12}"
                ))
            return
        }
        let wait = Duration.milliseconds(max(0, request.waitMilliseconds ?? 0))
        engine.followStageLog(
            id, after: request.after.map(StageLogCursor.init), wait: min(wait, ControlRequest.maximumLogWait)
        ) { read in
            reply(ControlReply(ok: true, logs: LiveLogs(read)))
        }
    }
}

extension StageLogCursor {
    init(_ cursor: LogCursor) {
        self.init(
            jobAttempt: cursor.jobAttempt, position: cursor.position, attempt: cursor.attempt,
            sequence: cursor.sequence)
    }
}

extension LogCursor {
    init(_ cursor: StageLogCursor) {
        self.init(
            jobAttempt: cursor.jobAttempt, position: cursor.position, attempt: cursor.attempt,
            sequence: cursor.sequence)
    }
}

extension LiveLogs {
    init(_ read: LiveStageLogRead) {
        self.init(
            running: read.running, memoryFrom: read.memoryFrom.map(LogCursor.init),
            lines: read.lines.compactMap { entry in
                guard case let .line(bytes) = entry.content else { return nil }
                return LogLine(
                    cursor: LogCursor(entry.cursor), at: entry.at.timeIntervalSince1970, line: Data(bytes),
                    stream: entry.stream == .stderr ? nil : entry.stream.rawValue)
            })
    }
}
