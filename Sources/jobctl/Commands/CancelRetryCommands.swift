import ArgumentParser
import Foundation
import JobConfig
import JobControl
import JobStore

struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a job.",
        discussion: """
            A pending job is cancelled at once and never runs. A running job is flagged: jobd stops its \
            stage (SIGTERM to the process group, SIGKILL after kill-grace) within seconds, runs its \
            catch/finally stages, and marks it cancelled. A job that already ended is left as it is \
            (exit status 0; the output says so).

            Examples:
              jobctl cancel 42
              jobctl cancel 42 --json
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id.", transform: Arguments.jobID)
    var id: Int64

    func run() async throws {
        try await options.run { session in
            let (config, outcome, node) = try await session.withJobStore(job: id) { config, store in
                let outcome = try await store.requestCancellation(of: id)
                guard case .requested = outcome else { return (config, outcome, String?.none) }
                return (config, outcome, try await store.job(id)?.job.leaseOwner.map(LeaseOwner.node(of:)))
            }
            let (word, text): (String, String)
            switch outcome {
            case .cancelled:
                (word, text) = ("cancelled", "job \(id) cancelled; it had not started")
            case .requested:
                (word, text) = ("requested", "job \(id) is running\(node.map { " on \($0)" } ?? ""); jobd was asked to stop it")
                session.nudge(
                    config, ControlRequest(.cancel, job: id),
                    notRunningNote: "jobd is not running: job \(id) will be cancelled when jobd runs")
            case .alreadyResolved(let state):
                (word, text) = ("already-resolved", "job \(id) had already ended \(state.rawValue); nothing to cancel")
            }
            if session.json {
                var members: [(String, JSON)] = [("id", .int(id)), ("outcome", .string(word))]
                if case .alreadyResolved(let state) = outcome { members.append(("state", .string(state.rawValue))) }
                session.console.out(JSON.fields(members).pretty)
            } else {
                session.console.out(text + "\n")
            }
        }
    }
}

struct Retry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Run an ended job again, as its next attempt.",
        discussion: """
            The job's outcome and stages are kept as an earlier attempt (jobctl status shows them), and the \
            job goes back to pending with attempt + 1 and fresh stages, with the same input. Only a job \
            that ended (fulfilled, rejected or cancelled) can be retried: exit status 65 otherwise.

            Examples:
              jobctl retry 42
              jobctl retry 42 --delay 5m
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id.", transform: Arguments.jobID)
    var id: Int64

    @Option(parsing: .unconditional, help: ArgumentHelp("Do not start before this long from now.", valueName: "duration"),
            transform: Arguments.duration)
    var delay: Duration?

    func run() async throws {
        try await options.run { session in
            let (config, job) = try await session.withJobStore(job: id) { config, store in
                (config, try await store.retry(id, delay: delay ?? .zero))
            }
            let daemon = session.nudge(
                config, notRunningNote: "jobd is not running: job \(id) is queued and will start when jobd runs")
            if session.json {
                var members = JobJSON.job(job)
                members.append(("daemon", .string(daemon.rawValue)))
                session.console.out(JSON.fields(members).pretty)
            } else {
                session.console.out("job \(id) queued again as attempt \(job.attempt)\n")
            }
        }
    }
}
