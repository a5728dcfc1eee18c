import Foundation
internal import GRDB

extension SQLiteJobStore {
    public func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void) {
        // On the writer, so it sees every claim made before it.
        writer.enqueue(atomic: false, { db in
            let statement = try RawStatement(db, "SELECT min(run_at) FROM jobs WHERE state = 'pending' AND pool = ?")
            statement.bind(1, pool)
            let text = try statement.firstRow { $0.text(0) } ?? nil
            return text.flatMap(Timestamp.date)
        }, completion: completion)
    }

    public func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        guard !states.isEmpty else { return [:] }
        let names = states.map(\.rawValue)
        return try await read(doing: "count jobs") { db in
            // One range of the `jobs_state` index per state: no table scan.
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT state, count(*) FROM jobs WHERE state IN (\(Columns.placeholders(names.count))) GROUP BY state",
                arguments: StatementArguments(names))
            var counts = Dictionary(uniqueKeysWithValues: states.map { ($0, 0) })
            for row in rows {
                let name: String = row[0]
                if let state = JobState(rawValue: name) { counts[state] = row[1] }
            }
            return counts
        }
    }
}
