import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore: JobSchedulePauseStore {
    public func schedulePauses() async throws -> [SchedulePause] {
        try await read(doing: "read the schedules' pauses") { session in
            try await session.rows(
                """
                SELECT name, reason, actor, created_at, until, catch_up FROM {s}.pauses
                WHERE scope = 'schedule' ORDER BY name
                """
            ) { row in
                let row = PostgresIndexedRow(row)
                return SchedulePause(
                    pause: Pause(
                        scope: .schedule, name: try row.text(0) ?? "", reason: try row.text(1),
                        actor: try row.text(2) ?? "", createdAt: try row.date(3) ?? Date(), until: try row.date(4)),
                    catchUp: try row.text(5))
            }
        }
    }

    /// Tells every host's firer (`schedules` wake-up) to look at the schedules now.
    public func resumeSchedule(_ definition: String, catchUp: String?) async throws -> Pause? {
        try Self.require(
            catchUp.map { ["none", "latest", "all"].contains($0) } ?? true,
            "catch-up must be none, latest or all, not \(catchUp ?? "")")
        return try await write(atomic: true) { session in
            // The row's old `until` is read before the update sets it.
            let held = try await session.firstRow(
                """
                WITH held AS (
                    SELECT name, until FROM {s}.pauses
                    WHERE scope = 'schedule' AND name = $1 AND (until IS NULL OR until > now()) FOR UPDATE)
                UPDATE {s}.pauses AS pause SET until = now(), catch_up = $2
                FROM held WHERE pause.scope = 'schedule' AND pause.name = held.name
                RETURNING pause.reason, pause.actor, pause.created_at, held.until
                """, definition, catchUp
            ) { row in
                let row = PostgresIndexedRow(row)
                return Pause(
                    scope: .schedule, name: definition, reason: try row.text(0), actor: try row.text(1) ?? "",
                    createdAt: try row.date(2) ?? Date(), until: try row.date(3))
            }
            if held != nil { try await session.notify(.schedulesChanged) }
            return held
        }
    }
}
