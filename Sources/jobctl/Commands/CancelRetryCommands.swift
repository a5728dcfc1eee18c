import ArgumentParser
import Foundation
import JobConfig
import JobControl
import JobStore

struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a job, or every pending and running job a filter selects.",
        discussion: """
            A pending job is cancelled at once and never runs. A running job is flagged: jobd stops its \
            stage (SIGTERM to the process group, SIGKILL after kill-grace) within seconds, runs its \
            catch/finally stages, and marks it cancelled. A job that already ended is left as it is \
            (exit status 0; the output says so).

            With a filter instead of an id (--state, --definition, --since, --until, --key, --match, \
            --parent), it prints how many pending and running jobs match and stops; --yes cancels them, in \
            batches committed as they go (running the same command again finishes an interrupted run), \
            --dry-run prints their ids.

            Examples:
              jobctl cancel 42
              jobctl cancel 42 --json
              jobctl cancel --definition flood --state pending --yes
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id (or give a filter).", transform: Arguments.jobID)
    var id: Int64?

    @OptionGroup(title: "Filter") var filter: JobFilterOptions

    @OptionGroup(title: "Many jobs") var bulk: BulkOptions

    func validate() throws {
        try Arguments.validateTarget(id: id, filter: filter)
    }

    func run() async throws {
        guard let id else {
            return try await options.run { session in try await bulk.run(.cancel, filter: filter).run(session) }
        }
        try await options.run { session in
            let (config, outcome, node) = try await session.withJobStore(job: id) { config, store in
                let outcome = try await store.requestCancellation(of: id)
                if case .alreadyResolved = outcome {
                } else {
                    await BulkRun.recordSingle(.cancel, job: id, store: store, config: config, session: session)
                }
                guard case .requested = outcome else { return (config, outcome, String?.none) }
                return (config, outcome, try await store.job(id)?.job.leaseOwner.map(LeaseOwner.node(of:)))
            }
            let (word, text): (String, String)
            switch outcome {
            case .cancelled:
                (word, text) = ("cancelled", "job \(id) cancelled; it had not started")
            case .requested:
                (word, text) = (
                    "requested", "job \(id) is running\(node.map { " on \($0)" } ?? ""); jobd was asked to stop it"
                )
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
        abstract: "Run an ended job again, as its next attempt; or every ended job a filter selects.",
        discussion: """
            The job's outcome and stages are kept as an earlier attempt (jobctl status shows them), and the \
            job goes back to pending with attempt + 1 and fresh stages, with the same input. Only a job \
            that ended (fulfilled, rejected or cancelled) can be retried: exit status 65 otherwise.

            With a filter instead of an id (--state, --definition, --since, --until, --key, --match, \
            --parent), it prints how many ended jobs match and stops; --yes retries them, in batches \
            committed as they go (running the same command again finishes an interrupted run, and retries no \
            job twice), --dry-run prints their ids.

            Examples:
              jobctl retry 42
              jobctl retry 42 --delay 5m
              jobctl retry --state rejected --definition nightly-report --since 1h --yes
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id (or give a filter).", transform: Arguments.jobID)
    var id: Int64?

    @OptionGroup(title: "Filter") var filter: JobFilterOptions

    @OptionGroup(title: "Many jobs") var bulk: BulkOptions

    @Option(
        parsing: .unconditional, help: ArgumentHelp("Do not start before this long from now.", valueName: "duration"),
        transform: Arguments.duration)
    var delay: Duration?

    func validate() throws {
        try Arguments.validateTarget(id: id, filter: filter)
        if id == nil && delay != nil { throw ValidationError("--delay retries one job; it does not go with a filter") }
    }

    func run() async throws {
        guard let id else {
            return try await options.run { session in try await bulk.run(.retry, filter: filter).run(session) }
        }
        try await options.run { session in
            let (config, job) = try await session.withJobStore(job: id) { config, store in
                let job = try await store.retry(id, delay: delay ?? .zero)
                await BulkRun.recordSingle(.retry, job: id, store: store, config: config, session: session)
                return (config, job)
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

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an ended job, or every ended job a filter selects, with its stages, history and events.",
        discussion: """
            Only a job that ended (fulfilled, rejected or cancelled) is deleted: cancel a pending or running \
            one first. The audit trail keeps who deleted what (the actions table). With a filter instead of \
            an id (--state, --definition, --since, --until, --key, --match, --parent), it prints how many \
            ended jobs match and stops; --yes deletes them, in batches committed as they go, --dry-run prints \
            their ids.

            Examples:
              jobctl delete 42
              jobctl delete --state cancelled --until 30d --yes
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id (or give a filter).", transform: Arguments.jobID)
    var id: Int64?

    @OptionGroup(title: "Filter") var filter: JobFilterOptions

    @OptionGroup(title: "Many jobs") var bulk: BulkOptions

    func validate() throws {
        try Arguments.validateTarget(id: id, filter: filter)
    }

    func run() async throws {
        guard let id else {
            return try await options.run { session in try await bulk.run(.delete, filter: filter).run(session) }
        }
        try await options.run { session in
            let config = try session.daemonConfig()
            try await session.withStore(config) { store in
                guard let actions = store as? any JobActionStore else {
                    throw JobctlError(
                        .internalError, "this database keeps no audit trail, so jobctl does not delete jobs")
                }
                guard let job = try await store.job(id)?.job else { throw Session.unknownJob(id, config) }
                guard job.state.isResolved else {
                    throw JobctlError(
                        .invalidState,
                        "cannot delete job \(id): it is \(job.state.rawValue); only a fulfilled, rejected or cancelled "
                            + "job can be deleted (cancel it first, or wait for it)")
                }
                let start = ActionStart(
                    verb: .delete, actor: BulkRun.actor(config), filter: "job \(id)",
                    selection: JobSelection(jobID: id), matched: 1, highestID: id)
                var action = try await actions.startAction(start)
                while !action.isFinished { action = try await actions.continueAction(action.id, batchSize: 1) }
                guard action.changed == 1 else {
                    throw JobctlError(
                        .invalidState, "cannot delete job \(id): it changed meanwhile (jobctl status \(id))")
                }
                if session.json {
                    session.console.out(
                        JSON.fields([
                            ("id", .int(id)), ("outcome", .string("deleted")), ("action", .int(action.id)),
                        ]).pretty)
                } else {
                    session.console.out("job \(id) deleted (action \(action.id))\n")
                }
            }
        }
    }
}
