import Foundation

/// Where the stderr lines of stage attempts are kept (`stage_logs`): written
/// in batches by the engine that runs the stage, read by jobctl and the
/// dashboard, deleted with their job.
public protocol StageLogStore: Sendable {
    /// Writes one batch in the store's next transaction, among its other
    /// writes (never a transaction of its own). A batch about a job that no
    /// longer exists writes nothing and succeeds.
    func writeStageLog(_ batch: StageLogBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// The lines of a job after `query.after`, in order (job attempt, stage
    /// position, stage attempt, line), at most `query.limit`.
    func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry]
}

/// One stage attempt of one job attempt.
public struct StageLogKey: Sendable, Hashable {
    public var jobID: Int64
    /// The job's attempt (`jobs.attempt`: a retried job starts again at 1 for each stage).
    public var jobAttempt: Int
    public var position: Int
    /// The stage's attempt, 1-based (`stages.attempts`).
    public var attempt: Int

    public init(jobID: Int64, jobAttempt: Int, position: Int, attempt: Int) {
        self.jobID = jobID
        self.jobAttempt = jobAttempt
        self.position = position
        self.attempt = attempt
    }
}

/// Which output of a stage's process a line came from: stderr, or stdout
/// where stdout does not become the stage's value (`stage_logs.stream`).
public enum StageLogStream: String, Sendable, Hashable {
    case stderr
    case stdout
}

/// A line as written to the store: its number within the attempt (0-based,
/// counting the lines dropped), when it was read, its bytes and its stream.
public struct StageLogLine: Sendable, Hashable {
    public var sequence: Int
    public var at: Date
    public var bytes: [UInt8]
    public var stream: StageLogStream

    public init(sequence: Int, at: Date, bytes: [UInt8], stream: StageLogStream = .stderr) {
        self.sequence = sequence
        self.at = at
        self.bytes = bytes
        self.stream = stream
    }
}

/// How much of an attempt's log was left out between its head and its tail.
public struct StageLogDrop: Sendable, Hashable {
    /// The number of the first line dropped: where the gap is.
    public var sequence: Int
    public var lines: Int
    public var bytes: Int
    /// When the last line was dropped.
    public var at: Date

    public init(sequence: Int, lines: Int, bytes: Int, at: Date) {
        self.sequence = sequence
        self.lines = lines
        self.bytes = bytes
        self.at = at
    }
}

/// What one write does to an attempt's lines, in this order: clear what an
/// earlier run of the same attempt left (a job resumed after a crash),
/// delete tail lines that fell out of the cap, add `lines`, and set the
/// drop record.
public struct StageLogBatch: Sendable, Hashable {
    public var key: StageLogKey
    public var replacesEarlierRun: Bool
    public var deleting: ClosedRange<Int>?
    public var lines: [StageLogLine]
    public var dropped: StageLogDrop?

    public init(
        key: StageLogKey, replacesEarlierRun: Bool = false, deleting: ClosedRange<Int>? = nil,
        lines: [StageLogLine] = [], dropped: StageLogDrop? = nil
    ) {
        self.key = key
        self.replacesEarlierRun = replacesEarlierRun
        self.deleting = deleting
        self.lines = lines
        self.dropped = dropped
    }
}

/// Where a read of `stage_logs` goes on from: after this row.
public struct StageLogCursor: Sendable, Hashable, Comparable {
    public var jobAttempt: Int
    public var position: Int
    public var attempt: Int
    public var sequence: Int

    public init(jobAttempt: Int, position: Int, attempt: Int, sequence: Int) {
        self.jobAttempt = jobAttempt
        self.position = position
        self.attempt = attempt
        self.sequence = sequence
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.jobAttempt, lhs.position, lhs.attempt, lhs.sequence)
            < (rhs.jobAttempt, rhs.position, rhs.attempt, rhs.sequence)
    }
}

/// Which lines of a job to read.
public struct StageLogQuery: Sendable, Hashable {
    public static let limitRange = 1...10_000

    public var jobID: Int64
    /// nil: every attempt of the job.
    public var jobAttempt: Int?
    /// nil: every stage.
    public var position: Int?
    /// nil: every attempt of the stage.
    public var attempt: Int?
    /// Only rows after this one.
    public var after: StageLogCursor?
    public var limit: Int

    public init(
        jobID: Int64, jobAttempt: Int? = nil, position: Int? = nil, attempt: Int? = nil,
        after: StageLogCursor? = nil, limit: Int = 1000
    ) {
        self.jobID = jobID
        self.jobAttempt = jobAttempt
        self.position = position
        self.attempt = attempt
        self.after = after
        self.limit = limit
    }
}

/// A row of `stage_logs`: a line, or the record of the lines dropped there.
public struct StageLogEntry: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        case line([UInt8])
        case dropped(lines: Int, bytes: Int)
    }

    public var cursor: StageLogCursor
    public var at: Date
    public var content: Content
    /// The stream of a line (a drop record's is `stderr`).
    public var stream: StageLogStream

    public init(cursor: StageLogCursor, at: Date, content: Content, stream: StageLogStream = .stderr) {
        self.cursor = cursor
        self.at = at
        self.content = content
        self.stream = stream
    }
}
