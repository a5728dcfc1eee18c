import Foundation
import JobStore
internal import NIOCore
internal import PostgresNIO

/// A write of a running job that the writer merges with the others of its
/// kind in the same transaction: one `UPDATE … FROM unnest(…)` for every
/// stage start, one for every stage result, one for every finish (with its
/// stages resolved), instead of a round trip per write.
enum PostgresBatchedWrite: Sendable {
    case start(StageStart)
    case result(StageResult, StoredStageResult)
    case finish(JobFinish, StoredJobFinish)

    var lease: Lease {
        switch self {
        case let .start(start): start.lease
        case let .result(result, _): result.lease
        case let .finish(finish, _): finish.lease
        }
    }

    /// The stage row it writes; nil for a finish.
    var position: Int? {
        switch self {
        case let .start(start): start.position
        case let .result(result, _): result.position
        case .finish: nil
        }
    }

    var doing: String {
        switch self {
        case .start: "record the start of"
        case .result: "record the result of"
        case .finish: "finish"
        }
    }
}

/// Batched writes that follow each other in a transaction, run as at most
/// three statements: the starts, then the results, then the finishes. That
/// order is the order of the calls as long as no row is written twice and
/// nothing of a job follows its finish: ``accepts(_:)`` holds a write that
/// would break it for the next group.
struct PostgresBatchGroup {
    private(set) var writes: [(index: Int, write: PostgresBatchedWrite)] = []
    private var rows: Set<[Int64]> = []
    private var finished: Set<Int64> = []

    var isEmpty: Bool { writes.isEmpty }

    func accepts(_ write: PostgresBatchedWrite) -> Bool {
        let job = write.lease.jobID
        if finished.contains(job) { return false }
        guard let position = write.position else { return true }
        return !rows.contains([job, Int64(position)])
    }

    mutating func add(_ write: PostgresBatchedWrite, index: Int) {
        writes.append((index, write))
        if let position = write.position {
            rows.insert([write.lease.jobID, Int64(position)])
        } else {
            finished.insert(write.lease.jobID)
        }
    }

    /// Runs the group's statements; gives each write's outcome by index: nil
    /// when it was written, else why not (its lease is no longer the job's…).
    func run(_ session: PostgresSession) async throws -> [(index: Int, error: JobStoreError?)] {
        var starts: [(Int, StageStart)] = []
        var results: [(Int, StageResult, StoredStageResult)] = []
        var finishes: [(Int, JobFinish, StoredJobFinish)] = []
        for (index, write) in writes {
            switch write {
            case let .start(start): starts.append((index, start))
            case let .result(result, stored): results.append((index, result, stored))
            case let .finish(finish, stored): finishes.append((index, finish, stored))
            }
        }
        var written: Set<[Int64]> = []
        if !starts.isEmpty { written.formUnion(try await Self.writeStarts(starts.map(\.1), session)) }
        if !results.isEmpty { written.formUnion(try await Self.writeResults(results.map { ($0.1, $0.2) }, session)) }
        if !finishes.isEmpty {
            // Children's ends first: their parents' rows are locked before the children's (see childrenEnded).
            let children = finishes.filter { $0.1.parentID != nil }.map { ($0.1.lease.jobID, $0.2.state) }
            try await PostgresJobStore.childrenEnded(children, session)
            let ended = try await Self.writeFinishes(finishes.map { ($0.1, $0.2) }, session)
            written.formUnion(ended.map { [$0.id, -1] })
            let finished = Set(ended.map(\.id))
            try await PostgresJobStore.dependenciesEnded(
                finishes.filter { finished.contains($0.1.lease.jobID) }.map { ($0.1.lease.jobID, $0.2.state) }, session)
            // A job's end ends its children still going.
            for (_, finish, _) in finishes where finish.startsChildren && finished.contains(finish.lease.jobID) {
                let id = finish.lease.jobID
                try await PostgresJobStore.cancelChildren(
                    of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), session)
            }
            // A limited job freed a slot that a host waiting at its limit may take.
            for pool in Set(ended.compactMap(\.limitedPool)).sorted() {
                try await session.notify(.runnable(pool: pool))
            }
        }
        var outcomes: [(index: Int, error: JobStoreError?)] = []
        for (index, write) in writes {
            let key = [write.lease.jobID, Int64(write.position ?? -1)]
            if written.contains(key) {
                outcomes.append((index, nil))
            } else {
                let error = try await PostgresJobStore.fenceError(
                    write.lease, position: write.position, doing: write.doing, session)
                outcomes.append((index, error))
            }
        }
        return outcomes
    }

    /// The fence of stage writes, as in `PostgresJobStore+Stages.swift`:
    /// the job still runs under the lease, its row held `FOR KEY SHARE`
    /// until the commit (a host requeueing expired leases passes it by).
    private static let fenced = """
        JOIN {s}.jobs j ON j.id = w.job_id AND j.state = 'running' AND j.lease_owner = w.owner AND j.claims = w.claim
        FOR KEY SHARE OF j
        """

    /// A deferrable start (nobody waited for it) never goes over a result:
    /// made again after a store error, it may arrive after the result of
    /// its own attempt. It still counts as written when its stage exists.
    private static func writeStarts(_ starts: [StageStart], _ session: PostgresSession) async throws -> [[Int64]] {
        try await session.rows(
            """
            WITH w AS (
                SELECT w.* FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::bool[])
                    AS w(job_id, position, owner, claim, attempts, started_at, keeps_result)
                \(fenced)),
            written AS (
                UPDATE {s}.stages AS st
                SET state = 'running', attempts = w.attempts, started_at = w.started_at::timestamptz, finished_at = NULL,
                    value = NULL, value_bytes = NULL, error = NULL, exit_code = NULL, error_code = NULL
                FROM w WHERE st.job_id = w.job_id AND st.position = w.position
                    AND (NOT w.keeps_result OR st.state IN ('pending', 'running')))
            SELECT st.job_id, st.position::int8 FROM {s}.stages AS st
            JOIN w ON st.job_id = w.job_id AND st.position = w.position
            """,
            starts.map(\.lease.jobID), starts.map { Int64($0.position) }, starts.map(\.lease.owner),
            starts.map { Int64($0.lease.claim) }, starts.map { Int64($0.attempt) },
            starts.map { Timestamp.text($0.at) },
            starts.map(\.deferrable),
            decode: key)
    }

    private static func writeResults(
        _ results: [(StageResult, StoredStageResult)], _ session: PostgresSession
    ) async throws -> [[Int64]] {
        let values = results.map { PostgresStoredValue.split($0.1.value) }
        return try await session.rows(
            """
            WITH w AS (
                SELECT w.* FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::text[], $6::text[],
                                       $7::bytea[], $8::text[], $9::int8[], $10::int8[], $11::text[], $12::text[], $13::text[])
                    AS w(job_id, position, owner, claim, state, value, value_bytes, error, exit_code, attempts,
                         started_at, finished_at, error_code)
                \(fenced))
            UPDATE {s}.stages AS st
            SET state = w.state, value = w.value, value_bytes = w.value_bytes, error = w.error, exit_code = w.exit_code,
                attempts = w.attempts, started_at = coalesce(w.started_at::timestamptz, st.started_at),
                finished_at = w.finished_at::timestamptz, error_code = w.error_code
            FROM w WHERE st.job_id = w.job_id AND st.position = w.position
            RETURNING st.job_id, st.position::int8
            """,
            results.map(\.0.lease.jobID), results.map { Int64($0.0.position) }, results.map(\.0.lease.owner),
            results.map { Int64($0.0.lease.claim) }, results.map(\.1.state.rawValue), PostgresArray(values.map(\.text)),
            PostgresArray.bytes(values.map(\.bytes)), PostgresArray(results.map(\.1.error)),
            PostgresArray(results.map { $0.0.exitCode.map(Int64.init) }), results.map { Int64($0.0.attempt) },
            PostgresArray(results.map { PostgresStoredValue.time($0.0.startedAt) }),
            results.map { Timestamp.text($0.0.at) },
            PostgresArray(results.map(\.1.errorCode)),
            decode: key)
    }

    /// Resolves the jobs and, in the same statement, their stages: those
    /// never reached are skipped, one cut short is rejected (interrupted).
    /// Gives the jobs resolved, with the pool of each one under a
    /// concurrency limit (it has a limit key).
    private static func writeFinishes(
        _ finishes: [(JobFinish, StoredJobFinish)], _ session: PostgresSession
    ) async throws -> [(id: Int64, limitedPool: String?)] {
        let values = finishes.map { PostgresStoredValue.split($0.1.result) }
        return try await session.rows(
            """
            WITH w AS (
                SELECT * FROM unnest($1::int8[], $2::text[], $3::int8[], $4::text[], $5::text[], $6::bytea[], $7::text[],
                                     $8::text[], $9::text[])
                    AS w(id, owner, claim, state, result, result_bytes, error, finished_at, interrupted)),
            done AS (
                UPDATE {s}.jobs AS j
                SET state = w.state, result = w.result, result_bytes = w.result_bytes, error = w.error,
                    finished_at = w.finished_at::timestamptz, lease_expires_at = NULL
                FROM w WHERE j.id = w.id AND j.state = 'running' AND j.lease_owner = w.owner AND j.claims = w.claim
                RETURNING j.id, w.interrupted, CASE WHEN j.limit_key IS NOT NULL THEN j.pool END AS limited_pool),
            resolved AS (
                UPDATE {s}.stages AS st
                SET state = CASE st.state WHEN 'pending' THEN 'skipped' ELSE 'rejected' END,
                    error = CASE st.state WHEN 'running' THEN done.interrupted ELSE st.error END,
                    error_code = CASE st.state WHEN 'running' THEN 'interrupted' ELSE st.error_code END
                FROM done WHERE st.job_id = done.id AND st.state IN ('pending', 'running'))
            SELECT id, limited_pool FROM done
            """,
            finishes.map(\.0.lease.jobID), finishes.map(\.0.lease.owner), finishes.map { Int64($0.0.lease.claim) },
            finishes.map(\.1.state.rawValue), PostgresArray(values.map(\.text)),
            PostgresArray.bytes(values.map(\.bytes)),
            PostgresArray(finishes.map(\.1.error)), finishes.map { Timestamp.text($0.0.at) },
            finishes.map { JobStoreError.interruptedMessage($0.1.state) },
            decode: { row in (try PostgresIndexedRow(row).int64(0), try PostgresIndexedRow(row).text(1)) })
    }

    private static func key(_ row: PostgresRow) throws -> [Int64] {
        let row = PostgresIndexedRow(row)
        return [try row.int64(0), try row.int64(1)]
    }
}
