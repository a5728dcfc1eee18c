import Promises

/// Why a stage or a job did not fulfil. `code` is stable and meant for
/// matching; `message` says what failed, where, and why.
public struct EngineError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A stage's action failed (non-zero exit, `fail:`, a transform error…).
        public static let stageFailed = Code("stage-failed")
        /// One attempt of a stage ran past the stage's `timeout`.
        public static let stageTimedOut = Code("stage-timed-out")
        /// The job ran past its `timeout`.
        public static let jobTimedOut = Code("job-timed-out")
        /// `jobctl cancel`: the job was asked to stop.
        public static let cancelled = Code("cancelled")
        /// A stage marked `idempotent: false` was running when jobd stopped.
        public static let interrupted = Code("interrupted")
        /// A stage's promise was deallocated while pending (its resolver was lost).
        public static let promiseLeaked = Code("promise-leaked")
        /// A rejection read back from SQLite when a job resumed.
        public static let resumedRejection = Code("resumed-rejection")
        /// The job's definition is unknown, or no longer matches the job's stages.
        public static let badDefinition = Code("bad-definition")
        /// The engine is draining: the job stops here and stays resumable.
        public static let draining = Code("draining")
        /// Another runner holds the job now (this engine's lease expired).
        public static let leaseLost = Code("lease-lost")
        /// A stage result could not be written to the store.
        public static let storeFailed = Code("store-failed")
        /// The job waits for its child jobs: its run ends here, unresolved,
        /// and it is claimed again when they have ended.
        public static let waitingForChildren = Code("waiting-for-children")

        /// The code a stage's rejection was stored with (`stages.error_code`),
        /// read back when the job resumes; nil for a text this engine does
        /// not know. Codes that halt a job are never stored with a stage, so
        /// they are not read back either.
        static func stored(_ rawValue: String) -> Code? {
            let recorded: [Code] = [
                .stageFailed, .stageTimedOut, .jobTimedOut, .cancelled, .interrupted, .promiseLeaked,
                .resumedRejection, .badDefinition,
            ]
            return recorded.first { $0.rawValue == rawValue }
        }
    }

    public var code: Code
    public var message: String
    public var jobID: Int64?
    /// The stage concerned, if any.
    public var position: Int?
    /// The exit status of the stage's process, when it exited.
    public var exitCode: Int32?
    /// Already written as its stage's result.
    var recorded = false
    /// Between SIGTERM and SIGKILL to the processes it stops, if shorter
    /// than the kill grace (a lease about to expire leaves less time).
    var stopGrace: Duration?

    public init(_ code: Code, _ message: String, jobID: Int64? = nil, position: Int? = nil, exitCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.jobID = jobID
        self.position = position
        self.exitCode = exitCode
    }

    public var description: String { message }

    /// A `recover` stage may turn it into a value: a stage's own failure.
    /// Cancellation, the job's timeout, an interruption and a lost promise
    /// end the job; `catch`, `ensure` and `finally` still run.
    var isRecoverable: Bool {
        code == .stageFailed || code == .stageTimedOut || code == .resumedRejection
    }

    /// The engine stops working on the job without resolving it: no further
    /// stage runs, not even `finally`, and the job stays resumable (draining,
    /// waiting for its children) or belongs to someone else now (lease
    /// lost, store failure).
    var haltsJob: Bool {
        code == .draining || code == .leaseLost || code == .storeFailed || code == .waitingForChildren
    }
}

extension EngineError: CancellableError {
    /// True for `cancelled`: `recover` stages skip it (PromiseKit's
    /// `.allErrorsExceptCancellation`), `catch` stages see it (`.allErrors`).
    public var isCancelled: Bool { code == .cancelled }
}
