import Foundation

/// What one job's dashboard page reads: a range of its stages (of the
/// current attempt and of the earlier ones), a page of its events, and every
/// value, error and name cut in the database. What is read is bounded by
/// these numbers, whatever the job holds: a job of 30,000 stages, 100,000
/// events or a 50 MB value costs a page what a small one does.
public struct JobPageQuery: Sendable, Hashable {
    public var id: Int64
    /// Positions `firstStage ..< firstStage + stageLimit`.
    public var firstStage: Int
    public var stageLimit: Int
    /// The latest `eventLimit` events with an id below `eventsBefore` (all: nil).
    public var eventsBefore: Int64?
    public var eventLimit: Int
    /// The latest `attemptLimit` earlier attempts.
    public var attemptLimit: Int
    /// Each value (input, result, a stage's value) and error is read up to
    /// this many characters (bytes, for a value that is not text); names
    /// and event messages up to `textCharacters`.
    public var valueCharacters: Int
    public var textCharacters: Int

    public init(
        id: Int64, firstStage: Int = 0, stageLimit: Int = 100, eventsBefore: Int64? = nil, eventLimit: Int = 200,
        attemptLimit: Int = 10, valueCharacters: Int = 65_536, textCharacters: Int = 2_048
    ) {
        self.id = id
        self.firstStage = max(0, firstStage)
        self.stageLimit = max(1, stageLimit)
        self.eventsBefore = eventsBefore
        self.eventLimit = max(1, eventLimit)
        self.attemptLimit = max(1, attemptLimit)
        self.valueCharacters = max(1, valueCharacters)
        self.textCharacters = max(1, textCharacters)
    }
}

/// The answer to a ``JobPageQuery``. Values and errors are cut as the query
/// says; ``wholeBytes`` gives the whole size of each one that was cut.
public struct JobPageRead: Sendable, Hashable {
    /// Where a cut value is on the page.
    public enum ValuePlace: Sendable, Hashable {
        case input, result, error
        /// A stage's value or error; `attempt` nil for the current attempt.
        case stageValue(attempt: Int?, position: Int)
        case stageError(attempt: Int?, position: Int)
        case attemptResult(Int)
        case attemptError(Int)
    }

    public var job: Job
    /// The current attempt's stages in the range asked for.
    public var stages: [Stage]
    /// How many stages the current attempt has.
    public var stageCount: Int
    /// The latest earlier attempts asked for, oldest first, each with its
    /// stages in the range asked for.
    public var history: [JobAttempt]
    /// How many earlier attempts there are.
    public var attemptCount: Int
    /// The events asked for, oldest first.
    public var events: [JobEvent]
    /// How many events the job has.
    public var eventCount: Int
    /// The whole size in bytes of each value or error that was cut.
    public var wholeBytes: [ValuePlace: Int]

    public init(
        job: Job, stages: [Stage], stageCount: Int, history: [JobAttempt], attemptCount: Int, events: [JobEvent],
        eventCount: Int, wholeBytes: [ValuePlace: Int]
    ) {
        self.job = job
        self.stages = stages
        self.stageCount = stageCount
        self.history = history
        self.attemptCount = attemptCount
        self.events = events
        self.eventCount = eventCount
        self.wholeBytes = wholeBytes
    }
}

extension JobPageRead.ValuePlace {
    /// The place as one path segment: `input`, `result`, `error`,
    /// `stage-N-value`, `stage-N-error`, `attempt-A-result`, `attempt-A-error`,
    /// `attempt-A-stage-N-value`, `attempt-A-stage-N-error`.
    public var name: String {
        switch self {
        case .input: "input"
        case .result: "result"
        case .error: "error"
        case .stageValue(let attempt, let position):
            (attempt.map { "attempt-\($0)-" } ?? "") + "stage-\(position)-value"
        case .stageError(let attempt, let position):
            (attempt.map { "attempt-\($0)-" } ?? "") + "stage-\(position)-error"
        case .attemptResult(let attempt): "attempt-\(attempt)-result"
        case .attemptError(let attempt): "attempt-\(attempt)-error"
        }
    }

    /// The place a ``name`` names, or nil.
    public init?(name: String) {
        var parts = name.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        func number() -> Int? {
            guard !parts.isEmpty, let value = Int(parts[0]), value >= 0, String(value) == parts[0] else { return nil }
            parts.removeFirst()
            return value
        }
        var attempt: Int?
        if parts.first == "attempt" {
            parts.removeFirst()
            guard let value = number(), value > 0 else { return nil }
            attempt = value
        }
        switch (attempt, parts.first) {
        case (nil, "input") where parts.count == 1: self = .input
        case (nil, "result") where parts.count == 1: self = .result
        case (nil, "error") where parts.count == 1: self = .error
        case (let attempt?, "result") where parts.count == 1: self = .attemptResult(attempt)
        case (let attempt?, "error") where parts.count == 1: self = .attemptError(attempt)
        case (_, "stage"):
            parts.removeFirst()
            guard let position = number(), parts.count == 1 else { return nil }
            switch parts[0] {
            case "value": self = .stageValue(attempt: attempt, position: position)
            case "error": self = .stageError(attempt: attempt, position: position)
            default: return nil
            }
        default: return nil
        }
    }

    /// The table, the column and the row's conditions beyond `job_id`.
    package var source: (table: String, column: String, attempt: Int?, position: Int?) {
        switch self {
        case .input: ("jobs", "input", nil, nil)
        case .result: ("jobs", "result", nil, nil)
        case .error: ("jobs", "error", nil, nil)
        case .stageValue(let attempt, let position):
            (attempt == nil ? "stages" : "stage_attempts", "value", attempt, position)
        case .stageError(let attempt, let position):
            (attempt == nil ? "stages" : "stage_attempts", "error", attempt, position)
        case .attemptResult(let attempt): ("job_attempts", "result", attempt, nil)
        case .attemptError(let attempt): ("job_attempts", "error", attempt, nil)
        }
    }
}
