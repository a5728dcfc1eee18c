import Foundation

/// What control needs (`jobctl submit`, `cancel`, `retry`, a schedule
/// firing): putting jobs in, stopping them, running them again.
public protocol JobControlStore: Sendable {
    /// Submits jobs in one transaction: all are stored or none is.
    /// Returns one ``Submission`` per job, in order.
    func submit(_ jobs: [NewJob]) async throws -> [Submission]

    /// Cancels a pending job at once, or flags a running one for the engine to stop.
    func requestCancellation(of id: Int64) async throws -> CancellationOutcome

    /// Puts a resolved job back to pending with `attempt + 1` and fresh
    /// stages, after copying its outcome and stages to the attempt history.
    func retry(_ id: Int64, delay: Duration) async throws -> Job
}

extension JobControlStore {
    /// Submits one job.
    public func submit(_ job: NewJob) async throws -> Submission {
        let submissions = try await submit([job])
        return submissions[0]
    }

    public func retry(_ id: Int64) async throws -> Job {
        try await retry(id, delay: .zero)
    }
}
