import JobProcesses

/// Where the stderr lines of a stage attempt go besides the store (jobd
/// sends them to the journal). `receive` runs on the process loop's thread,
/// as ``OutputLineSink``'s does: quick, never blocking.
public protocol StageLogMirror: OutputLineSink {
    /// The attempt ended: no more lines come.
    func close()
}

/// Which stage attempt a mirror is made for.
public struct StageLogSource: Sendable, Hashable {
    public var jobID: Int64
    public var definition: String
    public var stage: String
    public var position: Int
    public var attempt: Int

    public init(jobID: Int64, definition: String, stage: String, position: Int, attempt: Int) {
        self.jobID = jobID
        self.definition = definition
        self.stage = stage
        self.position = position
        self.attempt = attempt
    }
}
