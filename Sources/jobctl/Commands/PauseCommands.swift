import ArgumentParser
import Foundation
import JobConfig
import JobStore
import JobValues

/// What `jobctl pause` and `resume` act on.
enum PauseTarget: String, ExpressibleByArgument, CaseIterable {
    case pool
    case definition

    var scope: PauseScope {
        switch self {
        case .pool: .pool
        case .definition: .definition
        }
    }
}

struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Stop jobd starting the jobs of a pool or of a definition, until resumed or for a while.",
        discussion: """
            The pause is stored in the database, so every jobd obeys it (on PostgreSQL, every host) and it \
            survives restarts. A paused pool's jobs, or a paused definition's jobs in any pool, stay pending; \
            the other jobs are claimed as usual, and jobs already running go on. A jobd stops claiming them \
            at its next claim: at once when jobd runs here (jobctl nudges it), else within its poll-interval \
            (5s by default) or when one of its jobs ends. With --for the pause expires on its own; pausing again replaces the pause. \
            The pause, and each resume, is an event of no job in the audit trail (docs/schema.md).

            Examples:
              jobctl pause pool reports --reason "disk full on the NAS"
              jobctl pause definition nightly-export --for 2h
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to pause: pool or definition.")
    var target: PauseTarget

    @Argument(help: "The pool's or the definition's name.")
    var name: String

    @Option(
        name: .customLong("for"), parsing: .unconditional,
        help: ArgumentHelp("Resume on its own after this long.", valueName: "duration"),
        transform: Arguments.positiveDuration)
    var duration: Duration?

    @Option(help: ArgumentHelp("Why, for whoever looks at `jobctl pauses`.", valueName: "text"))
    var reason: String?

    func validate() throws {
        guard !name.isEmpty else { throw ValidationError("the \(target.rawValue)'s name is empty") }
    }

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            PauseCommand.noteUnknown(target, name, config, session)
            let pause = try await session.withStore(config) { store in
                let pause = try await store.pause(
                    Pause(
                        scope: target.scope, name: name, reason: reason.flatMap { $0.isEmpty ? nil : $0 },
                        actor: BulkRun.actor(config).description,
                        until: duration.map { Date().addingTimeInterval($0.timeInterval) }))
                try await store.recordEvent(pause.madeEvent)
                return pause
            }
            let daemon = session.nudge(config, notRunningNote: "jobd is not running: the pause holds when it runs")
            if session.json {
                var members = Pauses.json(pause)
                members.append(("daemon", .string(daemon.rawValue)))
                session.console.out(JSON.fields(members).pretty)
            } else {
                let until = pause.until.map { " until " + Formatting.timestamp($0) } ?? " until resumed"
                session.console.out("\(target.rawValue) \(Formatting.oneLine(name)) paused\(until)\n")
            }
        }
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
        }
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Let jobd start the jobs of a paused pool or definition again.",
        discussion: """
            Removes the pause and nudges jobd here (on PostgreSQL every host hears of it from the database \
            too), so the jobs start within a second. Resuming what is not paused changes nothing and says so.

            Examples:
              jobctl resume pool reports
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to resume: pool or definition.")
    var target: PauseTarget

    @Argument(help: "The pool's or the definition's name.")
    var name: String

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let removed = try await session.withStore(config) { store in
                let removed = try await store.resume(target.scope, name: name)
                if removed != nil {
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
        abstract: "List the pools and definitions that are paused: by whom, why, until when.",
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
