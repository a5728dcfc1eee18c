import Foundation
import JobStore
internal import PostgresNIO

/// Rate limits on PostgreSQL: when the next slot opens (the claim that
/// keeps them is in `PostgresJobStore+FlowClaim.swift`).
extension PostgresJobStore {
    public func nextRateSlot(
        pool: String, flow: ClaimFlow, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void
    ) {
        guard !flow.rates.isEmpty else { return completion(.success(nil)) }
        let definitions = flow.rates.keys.sorted()
        let perKey = definitions.map { flow.rates[$0]?.perKey ?? false }
        // On the writer, so it sees every claim made before it. The starts
        // in the order their slots free, until one whose definition and key
        // have a runnable job: a slot frees then.
        writer.enqueue(
            atomic: false,
            { session in
                try await session.firstRow(
                    """
                    SELECT min((
                        SELECT r.frees_at FROM {s}.rate_starts AS r
                        WHERE r.definition = d.definition AND r.frees_at > clock_timestamp() AND EXISTS (
                            SELECT 1 FROM {s}.jobs AS j
                            WHERE j.state = 'pending' AND j.waiting_on = 0 AND j.pool = $1 AND j.run_at <= now()
                                AND j.definition = r.definition
                                AND (NOT d.per_key OR coalesce(j.limit_key, '') = r.rate_key))
                        ORDER BY r.frees_at LIMIT 1))
                    FROM unnest($2::text[], $3::bool[]) AS d(definition, per_key)
                    """, pool, definitions, perKey
                ) { try PostgresIndexedRow($0).date(0) } ?? nil
            }, completion: completion)
    }

    public func nextRateSlot(forJob id: Int64, rate: StartRate) async throws -> Date? {
        try await read(doing: "read the rate starts of job \(id)") { session in
            // The slot that frees when enough of the starts in the window
            // have freed to leave one under the rate.
            try await session.firstRow(
                """
                SELECT (SELECT r.frees_at FROM {s}.rate_starts AS r
                        WHERE r.definition = j.definition AND r.rate_key = CASE WHEN $2 THEN coalesce(j.limit_key, '') ELSE '' END
                            AND r.frees_at > clock_timestamp()
                        ORDER BY r.frees_at DESC OFFSET $3 - 1 LIMIT 1)
                FROM {s}.jobs AS j WHERE j.id = $1
                """, id, rate.perKey, rate.count
            ) { try PostgresIndexedRow($0).date(0) } ?? nil
        }
    }
}
