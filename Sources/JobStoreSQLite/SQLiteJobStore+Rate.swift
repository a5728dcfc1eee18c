import Foundation
internal import GRDB
import JobStore
import JobValues

/// Rate limits on SQLite: the starts (claims) of rated jobs in
/// `rate_starts`, written by the claim that took them (see ``StartRate``).
/// One writer at a time: a claim counts every start committed before it.
extension SQLiteJobStore {
    /// The starts a claim reads and writes, at the claim's time `now`.
    struct RateStarts {
        let now: String
        private let counter: RawStatement
        private let insert: RawStatement

        /// Deletes the starts whose slot has freed: one range of
        /// `rate_starts_frees`, the rows freed since the last rated claim.
        init(now: String, _ db: Database) throws {
            self.now = now
            let prune = try RawStatement(db, "DELETE FROM rate_starts WHERE frees_at <= ?")
            try prune.bind(1, now)
            try prune.execute()
            // At most N: whether a slot is free, and how many, is all a
            // claim needs; a window that holds far more starts than the
            // rate allows (a rate lowered) is not read to its end.
            counter = try RawStatement(
                db,
                """
                SELECT count(*) FROM (
                    SELECT 1 FROM rate_starts INDEXED BY rate_starts_key
                    WHERE definition = ? AND rate_key = ? AND frees_at > ? LIMIT ?)
                """)
            insert = try RawStatement(
                db, "INSERT INTO rate_starts (definition, rate_key, job_id, frees_at) VALUES (?, ?, ?, ?)")
        }

        /// The starts not freed yet of each of `slots` (definition, rate
        /// key), up to its rate's count.
        func count(_ slots: [FlowGate.Slot], rates: [String: StartRate]) throws -> [FlowGate.Slot: Int] {
            var started: [FlowGate.Slot: Int] = [:]
            for slot in slots {
                try counter.bind(1, slot.definition)
                try counter.bind(2, slot.key)
                try counter.bind(3, now)
                try counter.bind(4, rates[slot.definition]?.count ?? 0)
                started[slot] = try counter.firstRow { $0.int(0) } ?? 0
            }
            return started
        }

        /// Writes the start of each job taken, freeing a window after `nowMs`.
        func record(_ taken: [(job: Int64, slot: FlowGate.Slot)], rates: [String: StartRate], nowMs: Int64) throws {
            for (job, slot) in taken {
                guard let rate = rates[slot.definition] else { continue }
                try insert.bind(1, slot.definition)
                try insert.bind(2, slot.key)
                try insert.bind(3, job)
                try insert.bind(4, Timestamp.text(milliseconds: nowMs + rate.window.milliseconds))
                try insert.execute()
            }
        }
    }
}

extension SQLiteJobStore {
    public func nextRateSlot(
        pool: String, flow: ClaimFlow, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void
    ) {
        guard !flow.rates.isEmpty else { return completion(.success(nil)) }
        // On the writer, so it sees every claim made before it.
        writer.enqueue(
            atomic: false,
            { db in
                let now = Timestamp.now()
                // The starts in the order their slots free, until one whose
                // definition and key have a runnable job: a slot frees then.
                let statement = try RawStatement(
                    db,
                    """
                    SELECT r.frees_at FROM rate_starts AS r INDEXED BY rate_starts_frees
                    WHERE r.frees_at > ?1 AND r.definition = ?2 AND EXISTS (
                        SELECT 1 FROM jobs AS j INDEXED BY jobs_claim
                        WHERE j.state = 'pending' AND j.waiting_on = 0 AND j.pool = ?3 AND j.run_at <= ?1
                            AND j.definition = r.definition AND (?4 = 0 OR coalesce(j.limit_key, '') = r.rate_key))
                    ORDER BY r.frees_at LIMIT 1
                    """)
                var next: String?
                for (definition, rate) in flow.rates {
                    try statement.bind(1, now)
                    try statement.bind(2, definition)
                    try statement.bind(3, pool)
                    try statement.bind(4, rate.perKey ? 1 : 0)
                    if let frees = try statement.firstRow({ $0.text(0) }) ?? nil, next.map({ frees < $0 }) ?? true {
                        next = frees
                    }
                }
                return next.flatMap(Timestamp.date)
            }, completion: completion)
    }

    public func nextRateSlot(forJob id: Int64, rate: StartRate) async throws -> Date? {
        try await read(doing: "read the rate starts of job \(id)") { db in
            let now = Timestamp.now()
            let job = try RawStatement(db, "SELECT definition, coalesce(limit_key, '') FROM jobs WHERE id = ?")
            try job.bind(1, id)
            guard let row = try job.firstRow({ (definition: $0.text(0) ?? "", key: $0.text(1) ?? "") }) else {
                return nil
            }
            let statement = try RawStatement(
                db,
                """
                SELECT frees_at FROM rate_starts INDEXED BY rate_starts_key
                WHERE definition = ? AND rate_key = ? AND frees_at > ?
                ORDER BY frees_at
                """)
            try statement.bind(1, row.definition)
            try statement.bind(2, rate.key(limitKey: row.key))
            try statement.bind(3, now)
            let frees = try statement.rows { $0.text(0) ?? "" }
            // The slot that frees when enough of the starts in the window
            // have freed to leave one under the rate.
            guard frees.count >= rate.count else { return nil }
            return Timestamp.date(frees[frees.count - rate.count])
        }
    }
}
