import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    /// The claim's condition on a job (`{s}.jobs`, the pool as `$1`): its
    /// pool is not paused, nor its definition. Both subqueries are
    /// uncorrelated (computed once per claim, the second hashed): with no
    /// pause, two reads of an empty table.
    static let notPaused = """
        NOT EXISTS (SELECT 1 FROM {s}.pauses WHERE scope = 'pool' AND name = $1 AND (until IS NULL OR until > now()))
        AND definition NOT IN (SELECT name FROM {s}.pauses WHERE scope = 'definition' AND (until IS NULL OR until > now()))
        """

    public func pause(_ pause: Pause) async throws -> Pause {
        try Self.require(!pause.name.isEmpty, "cannot pause a \(pause.scope.rawValue) without a name")
        let created = try await write(atomic: true) { session in
            try await session.firstRow(
                """
                INSERT INTO {s}.pauses (scope, name, reason, actor, until) VALUES ($1, $2, $3, $4, $5::timestamptz)
                ON CONFLICT (scope, name) DO UPDATE SET reason = excluded.reason, actor = excluded.actor,
                    created_at = excluded.created_at, until = excluded.until, catch_up = NULL
                RETURNING created_at
                """, pause.scope.rawValue, pause.name, pause.reason, pause.actor, PostgresStoredValue.time(pause.until)
            ) { try PostgresIndexedRow($0).date(0) } ?? nil
        }
        var stored = pause
        stored.createdAt = created ?? Date()
        stored.until = pause.until.map(PostgresStoredValue.milliseconds)
        return stored
    }

    /// Wakes every host's claim of the pools the pause held back (a
    /// paused definition: the pools of its pending jobs).
    /// A schedule's pause is ended, not removed (see ``resumeSchedule(_:catchUp:)``).
    public func resume(_ scope: PauseScope, name: String) async throws -> Pause? {
        if scope == .schedule { return try await resumeSchedule(name, catchUp: nil) }
        return try await write(atomic: true) { session in
            let removed = try await session.rows(
                """
                DELETE FROM {s}.pauses WHERE scope = $1 AND name = $2
                RETURNING scope, name, reason, actor, created_at, until, until IS NULL OR until > now()
                """, scope.rawValue, name
            ) { row -> Pause? in
                let row = PostgresIndexedRow(row)
                guard try row.bool(6), let scope = PauseScope(rawValue: try row.text(0) ?? "") else { return nil }
                return Self.pause(scope, row)
            }.compactMap { $0 }.first
            switch scope {
            case .pool:
                try await session.notify(.runnable(pool: name))
            case .definition:
                let pools = try await session.rows(
                    "SELECT DISTINCT pool FROM {s}.jobs WHERE state = 'pending' AND definition = $1", name
                ) { try PostgresIndexedRow($0).text(0) ?? "" }
                for pool in pools.sorted() { try await session.notify(.runnable(pool: pool)) }
            case .schedule:
                break
            }
            return removed
        }
    }

    public func pauses() async throws -> [Pause] {
        try await read(doing: "list the pauses") { session in
            try await session.rows(
                """
                SELECT scope, name, reason, actor, created_at, until FROM {s}.pauses
                WHERE until IS NULL OR until > now()
                ORDER BY scope, name
                """
            ) { row -> Pause? in
                let row = PostgresIndexedRow(row)
                guard let scope = PauseScope(rawValue: try row.text(0) ?? "") else { return nil }
                return Self.pause(scope, row)
            }.compactMap { $0 }
        }
    }

    static func pause(_ scope: PauseScope, _ row: PostgresIndexedRow) -> Pause {
        Pause(
            scope: scope, name: (try? row.text(1)) ?? "", reason: try? row.text(2), actor: (try? row.text(3)) ?? "",
            createdAt: ((try? row.date(4)) ?? nil) ?? Date(), until: (try? row.date(5)) ?? nil)
    }
}
