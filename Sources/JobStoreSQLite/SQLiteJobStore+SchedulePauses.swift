import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore: JobSchedulePauseStore {
    public func schedulePauses() async throws -> [SchedulePause] {
        try await read(doing: "read the schedules' pauses") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT name, reason, actor, created_at, until, catch_up FROM pauses
                    WHERE scope = 'schedule' ORDER BY name
                    """
            ).compactMap { row in
                guard let created = Timestamp.date(row[3] as String) else { return nil }
                return SchedulePause(
                    pause: Pause(
                        scope: .schedule, name: row[0], reason: row[1], actor: row[2], createdAt: created,
                        until: (row[4] as String?).flatMap(Timestamp.date)),
                    catchUp: row[5])
            }
        }
    }

    /// An engine on this store (the dashboard's resume) hears of it at
    /// once; another process's is nudged by jobctl.
    public func resumeSchedule(_ definition: String, catchUp: String?) async throws -> Pause? {
        try Self.require(
            catchUp.map { ["none", "latest", "all"].contains($0) } ?? true,
            "catch-up must be none, latest or all, not \(catchUp ?? "")")
        let held = try await write(atomic: true) { db -> Pause? in
            let now = Timestamp.now()
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT reason, actor, created_at, until FROM pauses
                    WHERE scope = 'schedule' AND name = ? AND (until IS NULL OR until > ?)
                    """, arguments: [definition, now])
            guard let row, let created = Timestamp.date(row[2] as String) else { return nil }
            try db.execute(
                sql: "UPDATE pauses SET until = ?, catch_up = ? WHERE scope = 'schedule' AND name = ?",
                arguments: [now, catchUp, definition])
            return Pause(
                scope: .schedule, name: definition, reason: row[0], actor: row[1], createdAt: created,
                until: (row[3] as String?).flatMap(Timestamp.date))
        }
        if held != nil { localWakeUps.yield([.schedulesChanged]) }
        return held
    }
}
