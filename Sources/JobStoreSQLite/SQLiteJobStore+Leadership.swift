import Foundation
internal import GRDB
import JobStore
import JobValues

extension SQLiteJobStore {
    public func acquireLeadership(of role: String, owner: String, for duration: Duration) async throws -> Bool {
        try JobStoreError.checkLeadership(role: role, owner: owner, duration: duration)
        return try await write(atomic: true) { db in
            let nowMs = Timestamp.milliseconds(Date())
            let now = Timestamp.text(milliseconds: nowMs)
            let expires = Timestamp.text(milliseconds: nowMs + duration.milliseconds)
            // Taken when free, expired, or already ours (then renewed);
            // `acquired_at` stays while the same owner keeps it.
            let statement = try RawStatement(
                db,
                """
                INSERT INTO leaders (role, owner, expires_at, acquired_at) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (role) DO UPDATE
                SET owner = excluded.owner, expires_at = excluded.expires_at,
                    acquired_at = CASE WHEN leaders.owner = excluded.owner THEN leaders.acquired_at
                                       ELSE excluded.acquired_at END
                WHERE leaders.owner = excluded.owner OR leaders.expires_at < excluded.acquired_at
                RETURNING owner
                """)
            try statement.bind(1, role)
            try statement.bind(2, owner)
            try statement.bind(3, expires)
            try statement.bind(4, now)
            return try statement.firstRow { $0.text(0) } == owner
        }
    }

    public func releaseLeadership(of role: String, owner: String) async throws {
        try await write(atomic: false) { db in
            try db.execute(sql: "DELETE FROM leaders WHERE role = ? AND owner = ?", arguments: [role, owner])
        }
    }
}
