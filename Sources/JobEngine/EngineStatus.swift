/// What an engine is doing: for the daemon's status command.
public struct EngineStatus: Sendable, Hashable {
    /// Jobs this engine runs now.
    public var running: Int
    /// Jobs waiting in the store (delayed ones included).
    public var pending: Int
    /// Jobs running now, by pool.
    public var runningByPool: [String: Int]
    public var draining: Bool
}
