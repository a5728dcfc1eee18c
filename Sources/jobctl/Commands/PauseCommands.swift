import ArgumentParser
import Foundation
import JobConfig
import JobControl
import JobStore
import JobValues

/// What `jobctl pause` and `resume` act on.
enum PauseTarget: String, ExpressibleByArgument, CaseIterable {
    case pool
    case definition
    /// A definition's schedules (named by the definition).
    case schedule

    var scope: PauseScope {
        switch self {
        case .pool: .pool
        case .definition: .definition
        case .schedule: .schedule
        }
    }
}

/// `resume schedule --catch-up`: what becomes of the occurrences a pause held back.
enum CatchUpArgument: String, ExpressibleByArgument, CaseIterable {
    case none
    case latest
    case all
}

/// Records a pause or a resume in the audit trail. The pause is made
/// already: a failure to record it is a note on stderr.
private func audit(
    _ verb: OperatorVerb, _ target: PauseTarget, _ name: String, store: any JobStore, config: DaemonConfiguration,
    session: Session
) async {
    guard let actions = store as? any JobScheduleRunStore else { return }
    do {
        _ = try await actions.recordOperatorAction(
            verb, filter: "\(target.rawValue) \(name)", definition: target == .pool ? nil : name,
            by: BulkRun.actor(config))
    } catch {
        session.console.note(
            "\(target.rawValue) \(name): the audit trail did not record the \(verb.rawValue): \(error)")
    }
}

struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Stop jobd starting the jobs of a pool or a definition, or firing a schedule, for a while.",
        discussion: """
            The pause is stored in the database, so every jobd obeys it (on PostgreSQL, every host) and it \
            survives restarts. A paused pool's jobs, or a paused definition's jobs in any pool, stay pending; \
            the other jobs are claimed as usual, and jobs already running go on (--cancel-running cancels \
            them, as `jobctl cancel` does). A jobd stops claiming them \
            at its next claim: at once when jobd runs here (jobctl nudges it), else within its poll-interval \
            (5s by default) or when one of its jobs ends. A paused schedule (named by its definition) fires \
            nothing, on every jobd, and its jobs already made run as usual; when the pause ends, the \
            occurrences it held back get the schedule's catch-up (or the one `resume --catch-up` gives). \
            With --for the pause expires on its own; pausing again replaces the pause. Recorded in the \
            audit trail (an `actions` row with verb `pause`) and as an event of no job (docs/schema.md).

            Examples:
              jobctl pause pool reports --reason "disk full on the NAS"
              jobctl pause definition nightly-export --for 2h
              jobctl pause definition nightly-export --cancel-running
              jobctl pause schedule nightly-report --for 1d --reason "month-end freeze"
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to pause: pool, definition or schedule.")
    var target: PauseTarget

    @Argument(help: "The pool's or the definition's name (a schedule: its definition's).")
    var name: String

    @Flag(help: "Also cancel the pool's or the definition's running jobs (as jobctl cancel does).")
    var cancelRunning = false

    @Option(
        name: .customLong("for"), parsing: .unconditional,
        help: ArgumentHelp("Resume on its own after this long.", valueName: "duration"),
        transform: Arguments.positiveDuration)
    var duration: Duration?

    @Option(help: ArgumentHelp("Why, for whoever looks at `jobctl pauses`.", valueName: "text"))
    var reason: String?

    func validate() throws {
        guard !name.isEmpty else { throw ValidationError("the \(target.rawValue)'s name is empty") }
        if cancelRunning && target == .schedule {
            throw ValidationError(
                "--cancel-running is for a pool or a definition: a schedule's jobs are its definition's")
        }
    }

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            PauseCommand.noteUnknown(target, name, config, session)
            let (pause, cancelled) = try await session.withStore(config) { store in
                let pause = try await store.pause(
                    Pause(
                        scope: target.scope, name: name, reason: reason.flatMap { $0.isEmpty ? nil : $0 },
                        actor: BulkRun.actor(config).description,
                        until: duration.map { Date().addingTimeInterval($0.timeInterval) }))
                try await store.recordEvent(pause.madeEvent)
                await audit(.pause, target, name, store: store, config: config, session: session)
                let cancelled = cancelRunning ? try await cancelRunningJobs(store, config: config) : nil
                return (pause, cancelled)
            }
            let daemon = session.nudge(config, notRunningNote: "jobd is not running: the pause holds when it runs")
            if let cancelled, daemon == .nudged {
                // jobd stops the jobs it runs now, not at its next lease renewal.
                for id in cancelled.ids { session.nudge(config, ControlRequest(.cancel, job: id), notRunningNote: "") }
            }
            if session.json {
                var members = Pauses.json(pause)
                if let cancelled {
                    members.append(
                        (
                            "cancelled",
                            .fields([
                                ("action", .int(cancelled.action.id)),
                                ("changed", .int(Int64(cancelled.action.changed))),
                            ])
                        ))
                }
                members.append(("daemon", .string(daemon.rawValue)))
                session.console.out(JSON.fields(members).pretty)
            } else {
                let until = pause.until.map { " until " + Formatting.timestamp($0) } ?? " until resumed"
                session.console.out("\(target.rawValue) \(Formatting.oneLine(name)) paused\(until)\n")
                if let cancelled {
                    session.console.out(
                        "cancelled \(Session.count(cancelled.action.changed, "running job")) (action \(cancelled.action.id))\n"
                    )
                }
            }
        }
    }

    /// Cancels the running jobs of the paused pool or definition, as one
    /// audited `cancel` action (a second run finishes what an interrupted
    /// one left); gives the action and the ids it cancelled, which jobd is
    /// told of so that it stops them now.
    private func cancelRunningJobs(
        _ store: any JobStore, config: DaemonConfiguration
    ) async throws -> (action: ActionRecord, ids: [Int64])? {
        guard let actions = store as? any JobActionStore else {
            throw JobctlError(.internalError, "this database keeps no audit trail, so jobctl does not cancel many jobs")
        }
        let selection =
            target == .pool
            ? JobSelection(states: [.running], pool: name) : JobSelection(states: [.running], definition: name)
        let filter = "--state running --\(target.rawValue) \(name) (pause --cancel-running)"
        var action: ActionRecord
        var after: Int64 = 0
        if let unfinished = try await actions.unfinishedAction(.cancel, filter: filter) {
            action = unfinished
            after = unfinished.lastID
        } else {
            let (count, highest) = try await actions.countMatching(selection, for: .cancel, ids: 1...Int64.max)
            guard count > 0 else { return nil }
            action = try await actions.startAction(
                ActionStart(
                    verb: .cancel, actor: BulkRun.actor(config), filter: filter, selection: selection, matched: count,
                    highestID: highest))
        }
        let ids = try await actions.idsMatching(action.selection, for: .cancel, after: after, limit: 10_000).filter {
            $0 <= action.highestID
        }
        while !action.isFinished { action = try await actions.continueAction(action.id, batchSize: 500) }
        return (action, ids)
    }

    /// A name jobd.yaml or the definitions do not know is paused anyway
    /// (a definition may come later), with a note: it may be a typo.
    static func noteUnknown(_ target: PauseTarget, _ name: String, _ config: DaemonConfiguration, _ session: Session) {
        switch target {
        case .pool:
            if config.pools[name] == nil {
                session.console.note(
                    "jobd.yaml has no pool \(Formatting.oneLine(name)) (pools: "
                        + config.pools.keys.sorted().joined(separator: ", ") + ")")
            }
        case .definition:
            if !session.definitions(of: config).definitions.contains(where: { $0.name == name }) {
                session.console.note("\(config.definitions) has no definition \(Formatting.oneLine(name))")
            }
        case .schedule:
            let definition = session.definitions(of: config).definitions.first(where: { $0.name == name })
            if definition == nil {
                session.console.note("\(config.definitions) has no definition \(Formatting.oneLine(name))")
            } else if definition?.schedules.isEmpty == true {
                session.console.note("definition \(Formatting.oneLine(name)) has no schedule")
            }
        }
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Let jobd start the jobs of a paused pool or definition, or fire a paused schedule, again.",
        discussion: """
            Removes the pause and nudges jobd here (on PostgreSQL every host hears of it from the database \
            too), so the jobs start within a second. Resuming what is not paused changes nothing and says so. \
            A resumed schedule's occurrences that fell while it was paused get its catch-up policy, or the \
            one --catch-up gives (none: skip them; latest: fire the most recent; all: fire each); its pause \
            row is kept, ended, so that every jobd applies it. Recorded in the audit trail (an `actions` row \
            with verb `resume`).

            Examples:
              jobctl resume pool reports
              jobctl resume schedule nightly-report --catch-up none
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to resume: pool, definition or schedule.")
    var target: PauseTarget

    @Argument(help: "The pool's or the definition's name (a schedule: its definition's).")
    var name: String

    @Option(
        name: .customLong("catch-up"),
        help: ArgumentHelp(
            "A schedule: what to do with the occurrences the pause held back (none, latest, all); default: the schedule's catch-up.",
            valueName: "policy"))
    var catchUp: CatchUpArgument?

    func validate() throws {
        if catchUp != nil && target != .schedule { throw ValidationError("--catch-up is for a schedule") }
    }

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let removed = try await session.withStore(config) { store in
                let removed: Pause?
                if target == .schedule, let schedules = store as? any JobSchedulePauseStore {
                    removed = try await schedules.resumeSchedule(name, catchUp: catchUp?.rawValue)
                } else {
                    removed = try await store.resume(target.scope, name: name)
                }
                if removed != nil {
                    await audit(.resume, target, name, store: store, config: config, session: session)
                    try await store.recordEvent(
                        Pause.resumedEvent(target.scope, name: name, by: BulkRun.actor(config).description))
                }
                return removed
            }
            var daemon: Session.NudgeOutcome?
            if removed != nil {
                daemon = session.nudge(
                    config, notRunningNote: "jobd is not running: the jobs start when it runs")
            }
            if session.json {
                var members: [(String, JSON)] = [
                    ("scope", .string(target.rawValue)), ("name", .string(name)),
                    ("outcome", .string(removed == nil ? "not-paused" : "resumed")),
                ]
                if let daemon { members.append(("daemon", .string(daemon.rawValue))) }
                session.console.out(JSON.fields(members).pretty)
            } else if removed == nil {
                session.console.out("\(target.rawValue) \(Formatting.oneLine(name)) was not paused\n")
            } else {
                session.console.out("\(target.rawValue) \(Formatting.oneLine(name)) resumed\n")
            }
        }
    }
}

struct Pauses: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pauses",
        abstract: "List the pools, definitions and schedules that are paused: by whom, why, until when.",
        discussion: """
            UNTIL is - for a pause that holds until `jobctl resume`. A pause whose --for has run out is no \
            longer listed (it no longer holds).

            Examples:
              jobctl pauses
              jobctl pauses --json
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let pauses = try await session.withStore(config) { store in try await store.pauses() }
            if session.json {
                session.console.out(JSON.fields([("pauses", .array(pauses.map { JSON.fields(Self.json($0)) }))]).pretty)
            } else if pauses.isEmpty {
                session.console.note("nothing is paused")
            } else {
                var table = Table(["SCOPE", "NAME", "SINCE", "UNTIL", "BY", "REASON"])
                for pause in pauses {
                    table.add([
                        Table.Cell(pause.scope.rawValue), Table.Cell(Formatting.oneLine(pause.name)),
                        Table.Cell(Formatting.timestamp(pause.createdAt)),
                        Table.Cell(pause.until.map(Formatting.timestamp) ?? "-"),
                        Table.Cell(Formatting.oneLine(pause.actor)),
                        Table.Cell(pause.reason.map { Formatting.oneLine($0) } ?? "-"),
                    ])
                }
                session.console.out(table.render(session.console))
            }
        }
    }

    static func json(_ pause: Pause) -> [(String, JSON)] {
        [
            ("scope", .string(pause.scope.rawValue)), ("name", .string(pause.name)),
            ("reason", pause.reason.map { .string($0) } ?? .null), ("by", .string(pause.actor)),
            ("created_at", Formatting.timestamp(pause.createdAt)), ("until", Formatting.timestamp(pause.until)),
        ]
    }
}
