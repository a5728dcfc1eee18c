import ArgumentParser
import JobConfig
import JobControl
import JobStore
import JobValues

/// The options every jobctl command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The jobd.yaml to use.",
            discussion: "Default: $JOBD_CONFIG, else ./config/jobd.yaml, else /etc/jobd/jobd.yaml, as jobd finds it.",
            valueName: "path"),
        completion: .file(extensions: ["yaml", "yml"]))
    var config: String?

    @Flag(name: .long, help: "Print JSON on stdout instead of text (errors stay one line on stderr).")
    var json = false

    /// Runs a command's body in a session; on failure, and with `--json`,
    /// also prints `{"error": {…}}` on stdout before passing the error on.
    func run(_ body: (Session) async throws -> Void) async throws {
        let session = Session(options: self)
        do {
            try await body(session)
        } catch {
            let failure = JobctlError.from(error)
            if json && !failure.reportedOnStdout {
                session.console.out(JSON.fields([("error", failure.json)]).pretty)
            }
            throw failure
        }
    }
}

extension JobctlError {
    var json: JSON {
        .fields([
            ("code", .string(code.rawValue)),
            ("message", .string(message)),
            ("exit_status", .int(Int64(exitStatus.code))),
            ("details", .array(details.map(JSON.string))),
        ])
    }
}

/// Parsers for the values jobctl's options take.
enum Arguments {
    /// `250ms`, `30s`, `5m`, `1h30m` (see docs/configuration.md); the error
    /// says what is wrong and what to write.
    @Sendable
    static func duration(_ text: String) throws -> Duration {
        do {
            return try Duration(parsing: text)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// A duration longer than zero (`--timeout`).
    @Sendable
    static func positiveDuration(_ text: String) throws -> Duration {
        let duration = try duration(text)
        guard duration > .zero else {
            throw ValidationError("invalid duration \"\(text)\": it must be longer than zero")
        }
        return duration
    }

    /// A stage's attempt number (`logs --attempt`): a positive integer.
    @Sendable
    static func attempt(_ text: String) throws -> Int {
        guard let number = Int(text), number > 0 else {
            throw ValidationError("invalid attempt \"\(text)\": attempts are numbered from 1")
        }
        return number
    }

    /// A command that acts on one job or on a filter's selection: exactly one of the two.
    static func validateTarget(id: Int64?, filter: JobFilterOptions) throws {
        if id != nil && !filter.isEmpty {
            throw ValidationError(
                "give a job id or a filter (--state, --definition, --since, --until, --key, --match), not both")
        }
        if id == nil && filter.isEmpty {
            throw ValidationError(
                "give a job id, or a filter (--state, --definition, --since, --until, --key, --match) to act on many jobs"
            )
        }
    }

    /// A job id: a positive integer.
    @Sendable
    static func jobID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else {
            throw ValidationError("invalid job id \"\(text)\": a job id is a positive integer, as submit prints it")
        }
        return id
    }

    /// `--after 12,13`: job ids, comma-separated.
    static func jobIDs(_ text: String) throws -> [Int64] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.filter { $0 != " " })
        }
        guard !parts.isEmpty, parts.count <= 1000 else {
            throw ValidationError("--after takes 1 to 1000 job ids, comma-separated (12,13), not \"\(text)\"")
        }
        return try parts.map(jobID)
    }
}

/// A state to list (`--state`).
enum StateArgument: String, CaseIterable, ExpressibleByArgument, Sendable {
    case pending, running, fulfilled, rejected, cancelled

    var state: JobState { JobState(rawValue: rawValue) ?? .pending }
}

extension GlobalOptions {
    /// `jobctl --config PATH list` as `jobctl list --config PATH`: the
    /// options every command takes may also come before the command's name
    /// (the argument parser takes them only after it). Nothing else moves.
    static func leadingOptionsMoved(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--config=") {
                leading.append(argument)
                index += 1
            } else if argument == "--config", index + 1 < arguments.count {
                leading += arguments[index...index + 1]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        let command = arguments[index]
        guard !command.hasPrefix("-"), command != "help" else { return arguments }
        // A subcommand of `schedules` takes the options, not `schedules` itself.
        if command == Schedules.configuration.commandName, index + 1 < arguments.count,
            Schedules.subcommandNames.contains(arguments[index + 1])
        {
            return [command, arguments[index + 1]] + leading + arguments[(index + 2)...]
        }
        return [command] + leading + arguments[(index + 1)...]
    }
}
