import Foundation

/// What a pause stops: the claims of a pool's jobs, or of a definition's
/// jobs in every pool, or a schedule's firings.
public enum PauseScope: String, Sendable, Hashable, CaseIterable, Codable {
    case pool
    case definition
    case schedule
}

/// A pause an operator made (`jobctl pause`). While it holds, the claim
/// passes over the jobs it covers; jobs already running go on. A pause
/// with `until` holds until that time and then no longer counts — it
/// expires on its own, with nothing to clean up.
public struct Pause: Sendable, Hashable {
    public var scope: PauseScope
    public var name: String
    /// Why, as the operator said it; `nil` when not said.
    public var reason: String?
    /// Who made it (the audit trail's actor: `user@host`).
    public var actor: String
    public var createdAt: Date
    /// When it expires; `nil`: until resumed.
    public var until: Date?

    public init(
        scope: PauseScope, name: String, reason: String? = nil, actor: String, createdAt: Date = Date(),
        until: Date? = nil
    ) {
        self.scope = scope
        self.name = name
        self.reason = reason
        self.actor = actor
        self.createdAt = createdAt
        self.until = until
    }

    /// Whether it still holds at `now`.
    public func holds(at now: Date) -> Bool { until.map { $0 > now } ?? true }
}

/// Pausing and resuming: a pause is stored in the database, so every host
/// obeys it and it survives restarts.
public protocol JobPauseStore: Sendable {
    /// Stores `pause`, replacing any pause of the same scope and name.
    /// Its `createdAt` is the database's time.
    func pause(_ pause: Pause) async throws -> Pause

    /// Removes the pause of `scope` and `name`; gives it, or `nil` when
    /// there was none that still held.
    func resume(_ scope: PauseScope, name: String) async throws -> Pause?

    /// The pauses that still hold, by scope and name.
    func pauses() async throws -> [Pause]
}

extension Pause {
    /// The audit trail's row for this pause being made: an event of no job
    /// (`events.job_id` NULL, kind `paused`).
    public var madeEvent: NewEvent {
        let until = until.map { "until \(Timestamp.text($0))" } ?? "until resumed"
        return NewEvent(
            jobID: nil, kind: "paused",
            message: "\(scope.rawValue) \(name) paused by \(actor) \(until)" + (reason.map { ": \($0)" } ?? ""))
    }

    /// The audit trail's row for a resume by `actor` (kind `resumed`).
    public static func resumedEvent(_ scope: PauseScope, name: String, by actor: String) -> NewEvent {
        NewEvent(jobID: nil, kind: "resumed", message: "\(scope.rawValue) \(name) resumed by \(actor)")
    }
}
