import ArgumentParser
import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobValues

struct Submit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Submit a job of a definition; print its id.",
        discussion: """
            The job is written to jobd's database, then jobd is nudged to start it at once. If jobd is not \
            running the job waits in the database (a note on stderr says so) and the exit status is still 0. \
            The definition must be one of jobd's (see jobctl definitions); its input is data for the first \
            stage's stdin, never part of a command line. Nothing is written if any check fails.

            --batch submits one job per input line (the newline is not part of the input) in one \
            transaction (all or none) and prints one id per line.

            --after 12,13 holds the job (each job of a --batch) until jobs 12 and 13 have fulfilled; if one \
            of them is rejected or cancelled, the job is cancelled with a reason naming it (with \
            --after-any-end it runs once they have ended, however). Only existing jobs can be named, so \
            there can be no cycle.

            Examples:
              jobctl submit hello --input world
              echo world | jobctl submit hello --input-file - --wait
              jobctl submit report --key 2026-11-20 --delay 10m
              seq 1 1000 | jobctl submit hello --batch -
              jobctl submit publish --after 12,13
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job definition's name (jobs.d/NAME.yaml).")
    var name: String

    @Option(parsing: .unconditional, help: ArgumentHelp("The job's input, as text.", valueName: "text"))
    var input: String?

    @Option(
        help: ArgumentHelp("Read the job's input from a file; - for stdin.", valueName: "path"),
        completion: .file())
    var inputFile: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Submit only once: a second submit of this definition with this key prints the first job's id.",
            valueName: "key"))
    var key: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Higher runs first (default 0).", valueName: "n"))
    var priority: Int = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Do not start before this long from now (250ms, 30s, 5m, 1h30m).", valueName: "duration"),
        transform: Arguments.duration)
    var delay: Duration?

    @Flag(help: "Wait for the job to end; print its result; exit 0 only if it was fulfilled.")
    var wait = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("With --wait: give up waiting after this long (exit 75).", valueName: "duration"),
        transform: Arguments.positiveDuration)
    var timeout: Duration?

    @Option(
        help: ArgumentHelp("Submit one job per line of this file; - for stdin.", valueName: "path"),
        completion: .file())
    var batch: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Start only once these jobs have fulfilled; if one is rejected or cancelled, the job is cancelled "
                + "with a reason naming it.", valueName: "id[,id…]"),
        transform: Arguments.jobIDs)
    var after: [Int64] = []

    @Flag(help: "With --after: start once those jobs have ended, however they ended.")
    var afterAnyEnd = false

    func validate() throws {
        if input != nil && inputFile != nil { throw ValidationError("give --input or --input-file, not both") }
        if let batch {
            if input != nil || inputFile != nil {
                throw ValidationError("--batch reads each job's input from its lines; drop --input/--input-file")
            }
            if key != nil { throw ValidationError("--key names one job; it cannot be used with --batch") }
            if wait { throw ValidationError("--wait follows one job; it cannot be used with --batch") }
            if batch == "-" && inputFile == "-" { throw ValidationError("stdin can be read once") }
        }
        if timeout != nil && !wait { throw ValidationError("--timeout applies to --wait") }
        if afterAnyEnd && after.isEmpty { throw ValidationError("--after-any-end applies to --after") }
        if let key {
            if key.isEmpty { throw ValidationError("--key must not be empty") }
            // Keys are text: two keys whose bytes differ must never read the same.
            if String(validating: RawArguments.value(of: "--key", parsed: key), as: UTF8.self) == nil {
                throw ValidationError("--key must be UTF-8 text; use --input for bytes")
            }
        }
    }

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let definition = try Self.definition(named: name, config: config, session)
            let cap = config.store.valueCap.bytes
            // run_at is set once the database is open, by its clock.
            if let batch {
                let jobs = try InputReader.batch(from: batch, cap: cap).map {
                    withAfter(definition.newJob(input: $0, priority: priority, runAt: nil))
                }
                try await submitBatch(jobs, config: config, session)
                return
            }
            let data: Data? =
                if let input {
                    try InputReader.input(bytes: RawArguments.value(of: "--input", parsed: input), cap: cap)
                } else if let inputFile {
                    try InputReader.input(from: inputFile, cap: cap)
                } else {
                    nil
                }
            let job = withAfter(definition.newJob(input: data, priority: priority, runAt: nil, idempotencyKey: key))
            try await submitOne(job, config: config, session)
        }
    }

    /// `job` to run after the jobs of `--after`.
    private func withAfter(_ job: NewJob) -> NewJob {
        var job = job
        job.after = after
        job.afterAnyEnd = afterAnyEnd
        return job
    }

    /// Now, or `--delay` from now, by the database's clock (as `retry
    /// --delay`): stored times are compared with the database's clock, so
    /// a host whose own clock is off must not move the job's start.
    /// Given explicitly, so that --json can print it.
    private func runAt(_ store: any JobStore) async throws -> Date {
        let now = try await store.databaseTime().now()
        return now + Double(delay?.wholeMilliseconds ?? 0) / 1000
    }

    private func submitOne(_ job: NewJob, config: DaemonConfiguration, _ session: Session) async throws {
        try await session.withStore(config) { store in
            var job = job
            job.runAt = try await runAt(store)
            let submission = try await store.submit(job)
            let daemon: Session.NudgeOutcome? =
                submission.created || (submission.duplicate && job.unique?.onConflict == .reschedule)
                ? session.nudge(
                    config,
                    notRunningNote: "jobd is not running: job \(submission.id) is queued and will start when jobd runs")
                : nil
            if submission.duplicate {
                session.console.note(Self.duplicateNote(submission, job))
            } else if !submission.created, let key {
                session.console.note("job \(submission.id) already has the key \(key); nothing new was submitted")
            }
            if wait {
                if session.console.stderrIsTerminal && !session.json {
                    session.console.note("job \(submission.id) submitted")
                }
                let outcome = try await JobWaiter(session: session, store: store, id: submission.id, timeout: timeout)
                    .wait()
                try Wait.report(outcome, timeout: timeout, session)
            } else if session.json {
                session.console.out(JSON.fields(Self.json(submission, job, daemon: daemon)).pretty)
            } else {
                session.console.out("\(submission.id)\n")
            }
        }
    }

    private func submitBatch(_ jobs: [NewJob], config: DaemonConfiguration, _ session: Session) async throws {
        guard !jobs.isEmpty else {
            session.console.note("the batch has no lines: nothing was submitted")
            if session.json { session.console.out(JSON.fields([("jobs", .array([]))]).pretty) }
            return
        }
        try await session.withStore(config) { store in
            let runAt = try await runAt(store)
            let jobs = jobs.map { job in
                var job = job
                job.runAt = runAt
                return job
            }
            let submissions = try await store.submit(jobs)
            for (line, (submission, job)) in zip(submissions, jobs).enumerated() where submission.duplicate {
                session.console.note("line \(line + 1): " + Self.duplicateNote(submission, job))
            }
            let daemon = session.nudge(
                config,
                notRunningNote: "jobd is not running: the \(jobs.count) jobs are queued and will start when jobd runs")
            if session.json {
                let items = zip(submissions, jobs).map { JSON.fields(Self.json($0, $1, daemon: daemon)) }
                session.console.out(JSON.fields([("jobs", .array(items))]).pretty)
            } else {
                session.console.out(submissions.map { "\($0.id)\n" }.joined())
            }
        }
    }

    static func json(_ submission: Submission, _ job: NewJob, daemon: Session.NudgeOutcome?) -> [(String, JSON)] {
        [
            ("id", .int(submission.id)),
            ("created", .bool(submission.created)),
            ("duplicate", .bool(submission.duplicate)),
            ("definition", .string(job.definition)),
            ("pool", .string(job.pool)),
            ("run_at", Formatting.timestamp(job.runAt)),
            ("after", .array(job.after.map { .int($0) })),
            ("daemon", .optional(daemon?.rawValue)),
        ]
    }

    /// What stderr says of a submit that found its unique key held.
    static func duplicateNote(_ submission: Submission, _ job: NewJob) -> String {
        let key = job.unique?.key ?? ""
        let shown =
            key.isEmpty || key.count > 64 || key.unicodeScalars.contains { $0.properties.generalCategory == .control }
            ? "" : " \"\(key)\""
        let change =
            switch job.unique?.onConflict {
            case .replaceInput?: "its input was replaced if it was still pending"
            case .reschedule?: "its run time was moved if it was still pending"
            default: "nothing new was submitted"
            }
        return "job \(submission.id) is a duplicate: it holds the unique key\(shown) of \(job.definition); \(change)"
    }

    /// The loaded definition called `name`, or an error that says why there is none.
    static func definition(
        named name: String, config: DaemonConfiguration, _ session: Session
    ) throws(JobctlError) -> JobDefinition {
        let set = session.definitions(of: config)
        if let definition = set[name] { return definition }
        let own = set.diagnostics.filter {
            $0.severity == .error && DefinitionLoader.baseName(of: $0.position.path) == name
        }
        if let first = own.first {
            throw JobctlError(
                .config, "the definition \(name) has errors and cannot be submitted: \(first)",
                details: own.dropFirst().map(\.description))
        }
        let known =
            set.names.isEmpty
            ? "there are none in \(config.definitions)" : "known: " + set.names.joined(separator: ", ")
        throw JobctlError(.unknownDefinition, "no job definition named \(name) (\(known))")
    }
}
