import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore {
    public func pause(_ pause: Pause) async throws -> Pause {
        try Self.checkPause(pause)
        return try await write(atomic: true) { db in
            var stored = pause
            stored.createdAt = Timestamp.date(milliseconds: Timestamp.milliseconds(Date()))
            try db.execute(
                sql: """
                    INSERT INTO pauses (scope, name, reason, actor, created_at, until) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (scope, name) DO UPDATE SET reason = excluded.reason, actor = excluded.actor,
                        created_at = excluded.created_at, until = excluded.until, catch_up = NULL
                    """,
                arguments: [
                    pause.scope.rawValue, pause.name, pause.reason, pause.actor, Timestamp.text(stored.createdAt),
                    pause.until.map(Timestamp.text),
                ])
            return stored
        }
    }

    /// A schedule's pause is ended, not removed (see ``resumeSchedule(_:catchUp:)``).
    public func resume(_ scope: PauseScope, name: String) async throws -> Pause? {
        if scope == .schedule { return try await resumeSchedule(name, catchUp: nil) }
        return try await write(atomic: true) { db in
            let found = try Self.pauses(
                db, where: "scope = ? AND name = ? AND (until IS NULL OR until > ?)",
                [scope.rawValue, name, Timestamp.now()])
            try db.execute(sql: "DELETE FROM pauses WHERE scope = ? AND name = ?", arguments: [scope.rawValue, name])
            return found.first
        }
    }

    public func pauses() async throws -> [Pause] {
        try await read(doing: "list the pauses") { db in
            try Self.pauses(db, where: "until IS NULL OR until > ?", [Timestamp.now()])
        }
    }

    static func pauses(
        _ db: Database, where condition: String, _ arguments: StatementArguments
    ) throws
        -> [Pause]
    {
        try Row.fetchAll(
            db,
            sql: """
                SELECT scope, name, reason, actor, created_at, until FROM pauses WHERE \(condition)
                ORDER BY scope, name
                """, arguments: arguments
        ).compactMap { row in
            guard let scope = PauseScope(rawValue: row[0]), let created = Timestamp.date(row[4] as String) else {
                return nil
            }
            return Pause(
                scope: scope, name: row[1], reason: row[2], actor: row[3], createdAt: created,
                until: (row[5] as String?).flatMap(Timestamp.date))
        }
    }

    static func checkPause(_ pause: Pause) throws {
        try require(!pause.name.isEmpty, "cannot pause a \(pause.scope.rawValue) without a name")
        if let until = pause.until {
            try require(
                Timestamp.isStorable(until),
                "cannot pause \(pause.scope.rawValue) \(pause.name) until \(until): the time must end before 9999-12-31"
            )
        }
    }

    /// What the pauses that hold now stop a claim of `pool` from taking:
    /// the whole pool, or the jobs of some definitions.
    static func pausedClaims(pool: String, now: String, _ db: Database) throws -> (pool: Bool, definitions: Set<String>)
    {
        let statement = try RawStatement(
            db,
            """
            SELECT scope, name FROM pauses
            WHERE ((scope = 'pool' AND name = ?) OR scope = 'definition') AND (until IS NULL OR until > ?)
            """)
        try statement.bind(1, pool)
        try statement.bind(2, now)
        var paused: (pool: Bool, definitions: Set<String>) = (false, [])
        for (scope, name) in try statement.rows({ ($0.text(0) ?? "", $0.text(1) ?? "") }) {
            if scope == PauseScope.pool.rawValue { paused.pool = true } else { paused.definitions.insert(name) }
        }
        return paused
    }

    /// When the pauses that hold now end: `pool`, if `pool` is paused (its
    /// `until`, NULL for none); `definitions`, the earliest `until` of the
    /// paused definitions.
    static func pauseEnds(
        pool: String, now: String, _ db: Database
    ) throws -> (
        pool: String??, definitions: String?
    ) {
        let statement = try RawStatement(
            db,
            """
            SELECT scope, until FROM pauses
            WHERE ((scope = 'pool' AND name = ?) OR scope = 'definition') AND (until IS NULL OR until > ?)
            """)
        try statement.bind(1, pool)
        try statement.bind(2, now)
        var ends: (pool: String??, definitions: String?) = (nil, nil)
        for (scope, until) in try statement.rows({ ($0.text(0) ?? "", $0.text(1)) }) {
            if scope == PauseScope.pool.rawValue {
                ends.pool = .some(until)
            } else if let until {
                ends.definitions = min(ends.definitions ?? until, until)
            }
        }
        return ends
    }
}
