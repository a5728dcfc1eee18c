/// A run that exited with status 0: its stdout is the value.
public struct ProcessOutcome: Sendable, Hashable {
    /// Everything it wrote to stdout (never truncated: over the limit the
    /// run is rejected instead).
    public var output: [UInt8]
    /// The last bytes it wrote to stderr.
    public var stderrTail: [UInt8]
    /// The main process's pid (already reaped; for logs only).
    public var processID: Int32
    /// Whether all of its input went into its stdin (false when it closed
    /// stdin or exited first: not an error).
    public var wroteAllInput: Bool
    /// From spawn to completion.
    public var elapsed: Duration

    public init(output: [UInt8], stderrTail: [UInt8], processID: Int32, wroteAllInput: Bool, elapsed: Duration) {
        self.output = output
        self.stderrTail = stderrTail
        self.processID = processID
        self.wroteAllInput = wroteAllInput
        self.elapsed = elapsed
    }
}
