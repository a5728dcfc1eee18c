import ArgumentParser
import Foundation
import JobConfig
import JobStore
import JobValues

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a job and every one of its stages.",
        discussion: """
            A pending job says why it waits: delayed, paused, waiting for other jobs, a full limit, its \
            turn in its key, its pool full, or ready for the next claim. \
            For each stage: its state, attempts, how long it took, and its value or error. On a terminal \
            values and errors are cut to fit a line (--full shows them whole); --json gives every value \
            whole, with the job's earlier attempts (after a retry) and its events. A job whose stages \
            started child jobs shows how many are in each state and the first rejected ones with their \
            errors; a child shows its parent. Reads the database, so it works while jobd is stopped.

            Examples:
              jobctl status 42
              jobctl status 42 --json | jq -r '.stages[] | select(.name == "fetch") | .value'
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id.", transform: Arguments.jobID)
    var id: Int64

    @Flag(help: "Show values and errors whole, even on a terminal.")
    var full = false

    func run() async throws {
        try await options.run { session in
            try await session.withJobStore(job: id) { config, store in
                guard let detail = try await store.job(id) else { throw Session.unknownJob(id, config) }
                let history = detail.job.attempt > 1 ? try await store.attemptHistory(of: id) : []
                let events = try await store.events(of: id)
                let children = ChildrenSummary(try await store.children(of: id, limit: ChildrenSummary.readLimit))
                let wait =
                    detail.job.state == .pending
                    ? try await store.waitReason(of: id, rules: session.waitRules(config)) : nil
                let firing =
                    detail.job.scheduledFor == nil
                    ? nil : try await (store as? any JobScheduleRunStore)?.scheduleFiring(of: id)
                if session.json {
                    session.console.out(
                        JobJSON.detail(
                            detail, history: history, events: events, children: children, wait: wait, firing: firing
                        ).pretty)
                } else {
                    let text = JobText(
                        console: session.console, shorten: session.console.stdoutIsTerminal && !full, now: Date())
                    session.console.out(
                        text.page(
                            detail, history: history, events: events, children: children, wait: wait, firing: firing))
                }
            }
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List jobs, newest first, a page at a time.",
        discussion: """
            --pending shows jobs waiting or running, --resolved those that ended (fulfilled, rejected, \
            cancelled), --state one or more states exactly; the other filters (the same as retry, cancel and \
            delete take) narrow that down; no filter shows every job. A list of pending \
            jobs (--pending, --state pending) says in its WAITING column why each pending job waits \
            (--json: wait_reason; jobctl status ID says it in full). A page holds \
            --limit jobs (default 20, at most 1000); when more are left, stderr tells the --before to pass \
            for the next page (--json: next_before). --parent lists every child of a job, in the order of \
            their items (--limit and --before do not apply). Reads the database, so it works while jobd is \
            stopped.

            Examples:
              jobctl list --pending
              jobctl list --state rejected --definition nightly-report --limit 5
              jobctl list --resolved --before 1200 --json
              jobctl list --match "acme invoice" --state rejected
              jobctl list --parent 42 --state rejected
              jobctl list --state rejected --since 1h --key invoice-7
            """)

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Only pending and running jobs.")
    var pending = false

    @Flag(help: "Only fulfilled, rejected and cancelled jobs.")
    var resolved = false

    @OptionGroup(title: "Filter") var filter: JobFilterOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many jobs (1 to 1000).", valueName: "n"))
    var limit: Int = 20

    @Option(
        parsing: .unconditional, help: ArgumentHelp("Only jobs older than this id: the next page.", valueName: "id"),
        transform: Arguments.jobID)
    var before: Int64?

    func validate() throws {
        if filter.parent != nil && (filter.match != nil || before != nil) {
            throw ValidationError("--parent lists every child of the job: give it without --match and --before")
        }
        if [pending, resolved, !filter.state.isEmpty].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --pending, --resolved and --state")
        }
        guard (1...1000).contains(limit) else {
            throw ValidationError("--limit must be within 1…1000, not \(limit)")
        }
    }

    /// The page to read; `--since` and `--until` made absolute from `now`.
    func query(now: Date) throws(JobctlError) -> JobQuery {
        let selection = try filter.selection(now: now)
        let states: Set<JobState>? =
            if pending {
                JobState.pendingSet
            } else if resolved {
                JobState.resolvedSet
            } else {
                selection.states
            }
        return JobQuery(
            states: states, definition: selection.definition, key: selection.key,
            createdSince: selection.createdSince, createdUntil: selection.createdUntil, limit: limit, before: before)
    }

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            // The table shows no input or result, and an error's first line.
            var query = try query(now: Date())
            query.values = session.json
            // A list that asks for pending jobs says why each waits
            // (judged by this host's pools and definitions).
            let showsWait = query.states?.contains(.pending) == true
            let rules = showsWait ? session.waitRules(config) : nil
            let (page, waits) = try await session.withStore(config) {
                [query, match = filter.match, parent = filter.parent] store -> (JobPage, [Int64: WaitReason]) in
                let page: JobPage
                if let parent {
                    let children = try await store.children(of: parent, limit: ChildrenSummary.readLimit)
                    page = JobPage(jobs: children.filter(query.includes), nextCursor: nil, unreadable: [])
                } else if let match {
                    guard let search = store as? any JobSearchStore else {
                        throw JobctlError(.internalError, "this database has no search index")
                    }
                    page = try await search.search(match, query)
                } else {
                    page = try await store.list(query)
                }
                let pending = page.jobs.filter { $0.state == .pending }.map(\.id)
                guard let rules, !pending.isEmpty else { return (page, [:]) }
                return (page, try await store.waitReasons(of: pending, rules: rules))
            }
            if session.json {
                session.console.out(
                    JSON.fields([
                        (
                            "jobs",
                            .array(
                                page.jobs.map { job in
                                    var members = JobJSON.job(job)
                                    if showsWait && job.state == .pending {
                                        members.append(("wait_reason", waits[job.id].map(JobJSON.waitReason) ?? .null))
                                    }
                                    return .fields(members)
                                })
                        ),
                        ("next_before", .optional(page.nextCursor)),
                        (
                            "unreadable",
                            .array(
                                page.unreadable.map { row in
                                    .fields([("id", .optional(row.jobID)), ("message", .string(row.message))])
                                })
                        ),
                    ]).pretty)
                try Self.reportUnreadable(page, session)
                return
            }
            if page.jobs.isEmpty && page.unreadable.isEmpty {
                session.console.note("no jobs match")
                return
            }
            var text = JobText(console: session.console, shorten: session.console.stdoutIsTerminal, now: Date())
            // Several hosts share a PostgreSQL database: which one ran each job.
            text.showsNode = config.databaseLocation.isShared
            session.console.out(text.listTable(page.jobs, waits: showsWait ? waits : nil))
            if let next = page.nextCursor {
                session.console.note("more: add --before \(next) for the next page")
            }
            try Self.reportUnreadable(page, session)
        }
    }

    /// Rows of the page that could not be read: one line each on stderr,
    /// then the bad-row error (exit 65) once the readable ones are shown.
    static func reportUnreadable(_ page: JobPage, _ session: Session) throws {
        guard !page.unreadable.isEmpty else { return }
        if !session.json {
            for row in page.unreadable { session.console.note("warning: " + Formatting.oneLine(row.message)) }
        }
        let ids = page.unreadable.compactMap(\.jobID).map(String.init).joined(separator: ", ")
        var error = JobctlError(
            .badRow,
            "\(page.unreadable.count) job(s) of this page cannot be read (\(ids)); each is named above "
                + "with its column: correct or delete the row (docs/schema.md, \"Rows written by hand\")")
        error.reportedOnStdout = session.json
        throw error
    }
}

extension JobQuery {
    /// Whether `job` passes the filter, as the stores' lists apply it: a
    /// parent's children are read whole and filtered here.
    func includes(_ job: Job) -> Bool {
        (states?.contains(job.state) ?? true) && (definition == nil || job.definition == definition)
            && (key == nil || job.idempotencyKey == key) && (createdSince.map { job.createdAt >= $0 } ?? true)
            && (createdUntil.map { job.createdAt < $0 } ?? true)
    }
}
