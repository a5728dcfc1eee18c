/// One line of the engine's log: the daemon passes them to its logger.
public struct EngineLogRecord: Sendable, CustomStringConvertible {
    public var level: LogConfig.Level
    public var message: String
    public var jobID: Int64?
    /// The stage concerned, if any.
    public var position: Int?

    public init(level: LogConfig.Level, message: String, jobID: Int64? = nil, position: Int? = nil) {
        self.level = level
        self.message = message
        self.jobID = jobID
        self.position = position
    }

    public var description: String {
        var prefix = "[\(level.rawValue)]"
        if let jobID { prefix += " job \(jobID)" }
        if let position { prefix += " stage \(position)" }
        return "\(prefix): \(message)"
    }
}

/// Where the engine's log lines go.
public typealias EngineLogger = @Sendable (EngineLogRecord) -> Void
