import Foundation
import JobStore
import JobValues

#if canImport(Glibc)
import Glibc
#endif

/// Waits for a job to resolve by reading it from the database, and — when
/// stderr is a terminal — shows on one line which stage runs and for how long.
///
/// A database that stops answering for a while (a PostgreSQL server
/// restarting, a connection dropped) is ridden out: the reads are tried
/// again, within the timeout, for up to ``outageLimit``; only then does the
/// wait give up, with its own error (not the timeout's).
struct JobWaiter {
    let session: Session
    let store: any JobStore
    let id: Int64
    var timeout: Duration?
    var pollInterval: Duration = .milliseconds(100)
    /// How long the database may go without answering before the wait gives up.
    var outageLimit: Duration = JobWaiter.defaultOutageLimit

    static let defaultOutageLimit = Duration.seconds(60)

    enum Outcome {
        case resolved(JobDetail)
        case timedOut(JobDetail)
    }

    func wait() async throws -> Outcome {
        let started = ContinuousClock.now
        let showProgress = session.console.stderrIsTerminal
        if showProgress { ProgressLine.installInterruptHandler() }
        defer { if showProgress { ProgressLine.clear() } }
        var last: JobDetail?
        var unansweredSince: ContinuousClock.Instant?
        while true {
            let read: JobDetail?
            do {
                read = try await store.job(id)
                unansweredSince = nil
            } catch let error as JobStoreError where error.code.isRetryable {
                let since = unansweredSince ?? .now
                unansweredSince = since
                if let timeout, ContinuousClock.now - started >= timeout {
                    guard let last else { throw unanswered(error, for: ContinuousClock.now - since) }
                    return .timedOut(last)
                }
                guard ContinuousClock.now - since < outageLimit else { throw unanswered(error, for: outageLimit) }
                try await Task.sleep(for: max(pollInterval, .milliseconds(500)))
                continue
            }
            guard let detail = read else {
                throw JobctlError(.unknownJob, "job \(id) disappeared while waiting for it (pruned?)")
            }
            last = detail
            if detail.job.state.isResolved { return .resolved(detail) }
            if let timeout, ContinuousClock.now - started >= timeout { return .timedOut(detail) }
            if showProgress {
                ProgressLine.show(Self.progress(detail, now: Date()), width: session.console.stderrWidth ?? 80)
            }
            try await Task.sleep(for: pollInterval)
        }
    }

    /// Runs `body` — opening the database and the first read of a wait —
    /// again while the database does not answer, as ``wait()`` does with
    /// its reads: a wait started during an outage rides it out the same
    /// way, for up to `outageLimit` and within `timeout` (counted from
    /// `started`), then gives up with the same error.
    static func riding<T: Sendable>(
        id: Int64, timeout: Duration?, started: ContinuousClock.Instant, outageLimit: Duration = defaultOutageLimit,
        pause: Duration = .milliseconds(500), _ body: () async throws -> T
    ) async throws -> T {
        let since = ContinuousClock.now
        while true {
            do {
                return try await body()
            } catch let error as JobStoreError where error.code.isRetryable {
                let now = ContinuousClock.now
                if let timeout, now - started >= timeout { throw unanswered(id, error, for: now - since) }
                guard now - since < outageLimit else { throw unanswered(id, error, for: outageLimit) }
                try await Task.sleep(for: pause)
            }
        }
    }

    /// The database stopped answering for `duration` (``outageLimit``, or until the timeout).
    private func unanswered(_ error: JobStoreError, for duration: Duration) -> JobctlError {
        Self.unanswered(id, error, for: duration)
    }

    private static func unanswered(_ id: Int64, _ error: JobStoreError, for duration: Duration) -> JobctlError {
        JobctlError(
            .databaseUnavailable,
            "stopped waiting for job \(id): the database has not answered for \(Duration.seconds(duration.components.seconds).jobdText) "
                + "(\(error.message)); the job goes on: jobctl wait \(id) waits again")
    }

    /// `job 12 running: stage 2/4 shout (map), attempt 2, 1.4s`
    static func progress(_ detail: JobDetail, now: Date) -> String {
        let job = detail.job
        let total = detail.stages.count
        switch job.state {
        case .pending where job.runAt > now:
            let wait = Formatting.milliseconds(from: now, to: job.runAt) ?? 0
            return "job \(job.id) pending: delayed, starts in \(Formatting.duration(milliseconds: wait))"
        case .pending:
            let waited = Formatting.milliseconds(from: max(job.runAt, job.createdAt), to: now) ?? 0
            let resumed = detail.stages.contains { $0.state == .fulfilled } ? " (resumes where it stopped)" : ""
            return "job \(job.id) pending\(resumed): waiting for jobd and a free slot in pool \(job.pool), "
                + Formatting.duration(milliseconds: waited)
        default:
            guard
                let stage = detail.stages.first(where: { $0.state == .running })
                    ?? detail.stages.first(where: { $0.state == .pending })
            else {
                return "job \(job.id) \(job.state.rawValue): finishing"
            }
            let since = Formatting.milliseconds(from: stage.startedAt ?? job.startedAt, to: now) ?? 0
            let attempt = stage.attempts > 1 ? ", attempt \(stage.attempts)" : ""
            let cancelling = job.cancelRequested ? " (cancelling)" : ""
            return "job \(job.id) \(job.state.rawValue)\(cancelling): stage \(stage.position + 1)/\(total) "
                + "\(stage.name) (\(stage.kind))\(attempt), \(Formatting.duration(milliseconds: since))"
        }
    }
}

/// One line of stderr, redrawn in place.
enum ProgressLine {
    static func show(_ text: String, width: Int) {
        let line = Formatting.oneLine(text, limit: max(10, width - 1))
        Console.write(Data(("\r\u{1B}[2K" + line).utf8), to: STDERR_FILENO)
    }

    static func clear() {
        Console.write(Data("\r\u{1B}[2K".utf8), to: STDERR_FILENO)
    }

    /// Ctrl-C while a progress line shows: clear it, then exit as SIGINT would.
    static func installInterruptHandler() {
        signal(SIGINT) { _ in
            let clear: StaticString = "\r\u{1B}[2K"
            _ = Glibc.write(STDERR_FILENO, clear.utf8Start, clear.utf8CodeUnitCount)
            _exit(130)
        }
    }
}
