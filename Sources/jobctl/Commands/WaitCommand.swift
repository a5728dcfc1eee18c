import ArgumentParser
import Foundation
import JobConfig
import JobControl
import JobStore
import JobValues

struct Wait: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait for a job to end; exit 0 only if it was fulfilled.",
        discussion: """
            Prints the job's result on stdout if it was fulfilled; its error on stderr otherwise. With \
            --json, prints the job with its stages, whatever the outcome. On a terminal, stderr shows \
            which stage runs and for how long.

            A database that stops answering (a PostgreSQL server restarting) is waited out, for up to 60 s \
            without an answer.

            Exit status: 0 fulfilled, 1 rejected or cancelled, 75 --timeout ran out or the database did not \
            answer for 60 s (the job goes on either way; the message says which), 67 no such job.

            Examples:
              jobctl wait 42
              jobctl wait 42 --timeout 5m --json
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id.", transform: Arguments.jobID)
    var id: Int64

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Give up after this long (250ms, 30s, 5m, 1h30m).", valueName: "duration"),
        transform: Arguments.positiveDuration)
    var timeout: Duration?

    func run() async throws {
        try await options.run { session in
            // A database that does not answer yet is waited out as one
            // that stops answering during the wait.
            let started = ContinuousClock.now
            var waiting = false
            try await JobWaiter.riding(id: id, timeout: timeout, started: started) {
                // Once the wait has begun, it rides out outages itself: an
                // error after it (closing the database) is not a reason to
                // wait again.
                guard !waiting else { return }
                try await session.withJobStore(job: id) { config, store in
                    guard try await store.job(id) != nil else { throw Session.unknownJob(id, config) }
                    waiting = true
                    let left = timeout.map { max(.zero, $0 - (ContinuousClock.now - started)) }
                    let outcome = try await JobWaiter(session: session, store: store, id: id, timeout: left).wait()
                    try Self.report(outcome, timeout: timeout, session)
                }
            }
        }
    }

    /// Prints how the wait ended (for `wait` and `submit --wait`), and
    /// throws unless the job was fulfilled.
    static func report(_ outcome: JobWaiter.Outcome, timeout: Duration?, _ session: Session) throws {
        let console = session.console
        switch outcome {
        case .timedOut(let detail):
            if session.json { console.out(JobJSON.detail(detail).pretty) }
            var failure = JobctlError(
                .timedOut,
                "job \(detail.job.id) is still \(detail.job.state.rawValue) after \((timeout ?? .zero).jobdText); "
                    + "it goes on (jobctl wait \(detail.job.id) waits again)")
            failure.reportedOnStdout = session.json
            throw failure
        case .resolved(let detail):
            let job = detail.job
            if session.json {
                console.out(JobJSON.detail(detail).pretty)
            } else if job.state == .fulfilled, let result = job.result {
                console.outBytes(result)
                if console.stdoutIsTerminal, result.last != UInt8(ascii: "\n") { console.out("\n") }
            }
            if job.state == .fulfilled {
                if console.stderrIsTerminal && !session.json {
                    let took = Formatting.milliseconds(from: job.startedAt, to: job.finishedAt)
                    console.note(
                        "job \(job.id) fulfilled" + (took.map { " in " + Formatting.duration(milliseconds: $0) } ?? ""))
                }
                return
            }
            var failure = JobctlError(
                job.state == .cancelled ? .jobCancelled : .jobRejected, failureLine(detail))
            failure.reportedOnStdout = session.json
            throw failure
        }
    }

    /// `job 12 rejected at stage 4/6 check (then): status is degraded, not ok`
    static func failureLine(_ detail: JobDetail) -> String {
        let job = detail.job
        var line = "job \(job.id) \(job.state.rawValue)"
        if let stage = detail.stages.last(where: { $0.state == .rejected }) {
            line += " at stage \(stage.position + 1)/\(detail.stages.count) \(stage.name) (\(stage.kind))"
        }
        let error = job.error ?? detail.stages.last(where: { $0.state == .rejected })?.error
        if let error { line += ": " + Formatting.oneLine(error, limit: 400) }
        return line
    }
}
