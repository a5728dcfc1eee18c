import Foundation
import GRDB

/// Column lists and row decoding, in one place so that the SQL and the
/// decoders cannot drift apart.
enum Columns {
    static let job = """
        id, definition, pool, state, priority, idempotency_key, input, result, error, attempt, \
        cancel_requested, claims, lease_owner, lease_expires_at, run_at, created_at, started_at, finished_at
        """
    static let stage = """
        job_id, position, name, kind, state, value, error, exit_code, attempts, started_at, finished_at
        """
    static let event = "id, job_id, position, kind, message, created_at"

    static func job(_ row: Row) throws -> Job {
        let id: Int64 = row[0]
        let stateText: String = row[3]
        guard let state = JobState(rawValue: stateText) else {
            throw JobStoreError(.corrupt, "job \(id) has the unknown state '\(stateText)' in jobs.state", jobID: id)
        }
        return Job(
            id: id,
            definition: row[1],
            pool: row[2],
            state: state,
            priority: row[4],
            idempotencyKey: row[5],
            input: StoredValue.data(row[6]),
            result: StoredValue.data(row[7]),
            error: row[8],
            attempt: row[9],
            cancelRequested: row[10],
            claims: row[11],
            leaseOwner: row[12],
            leaseExpiresAt: date(row[13]),
            runAt: date(row[14]) ?? Date(timeIntervalSince1970: 0),
            createdAt: date(row[15]) ?? Date(timeIntervalSince1970: 0),
            startedAt: date(row[16]),
            finishedAt: date(row[17]))
    }

    static func stage(_ row: Row) throws -> Stage {
        let jobID: Int64 = row[0]
        let position: Int = row[1]
        let stateText: String = row[4]
        guard let state = StageState(rawValue: stateText) else {
            throw JobStoreError(
                .corrupt, "stage \(position) of job \(jobID) has the unknown state '\(stateText)'", jobID: jobID)
        }
        return Stage(
            jobID: jobID,
            position: position,
            name: row[2],
            kind: row[3],
            state: state,
            value: StoredValue.data(row[5]),
            error: row[6],
            exitCode: row[7],
            attempts: row[8],
            startedAt: date(row[9]),
            finishedAt: date(row[10]))
    }

    static func event(_ row: Row) -> JobEvent {
        JobEvent(
            id: row[0], jobID: row[1], position: row[2], kind: row[3], message: row[4],
            createdAt: date(row[5]) ?? Date(timeIntervalSince1970: 0))
    }

    private static func date(_ text: String?) -> Date? {
        text.flatMap(Timestamp.date)
    }

    /// `?, ?, ?` for `count` arguments.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
