import Foundation
public import JobStore

/// What the daemon knows that the store does not: its pools, its
/// schedules, its build. The daemon makes one per page view.
public struct DashboardSnapshot: Sendable {
    public var pools: [PoolRow]
    public var schedules: [ScheduleRow]
    public var build: BuildInfo
    /// The time the pages are rendered for ("3 min ago", the chart's hour).
    public var now: Date

    public init(pools: [PoolRow] = [], schedules: [ScheduleRow] = [], build: BuildInfo, now: Date = Date()) {
        self.pools = pools
        self.schedules = schedules
        self.build = build
        self.now = now
    }
}

/// A pool of this jobd: its cap (`pools:` in jobd.yaml) and the jobs it runs now.
public struct PoolRow: Sendable, Hashable {
    public var name: String
    public var capacity: Int
    public var running: Int

    public init(name: String, capacity: Int, running: Int) {
        self.name = name
        self.capacity = capacity
        self.running = running
    }
}

/// A definition's schedule, as `jobctl schedules` shows it.
public struct ScheduleRow: Sendable, Hashable {
    public var definition: String
    /// As written: `cron: */15 * * * *`, `every: 15m`, `calendar: Mon..Fri 09:00`.
    public var expression: String
    public var nextFire: Date?
    public var lastFired: Date?
    /// The state of the job of the last occurrence, if it still exists.
    public var lastState: JobState?
    /// The pause that holds the definition's schedules, if one does.
    public var paused: Pause?

    public init(
        definition: String, expression: String, nextFire: Date?, lastFired: Date? = nil, lastState: JobState? = nil,
        paused: Pause? = nil
    ) {
        self.paused = paused
        self.definition = definition
        self.expression = expression
        self.nextFire = nextFire
        self.lastFired = lastFired
        self.lastState = lastState
    }
}

/// Which jobd serves the pages.
public struct BuildInfo: Sendable, Hashable {
    public var version: String
    /// `node:` in jobd.yaml.
    public var node: String
    public var startedAt: Date?

    public init(version: String, node: String, startedAt: Date? = nil) {
        self.version = version
        self.node = node
        self.startedAt = startedAt
    }
}
