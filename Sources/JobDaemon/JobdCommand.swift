import ArgumentParser
import Foundation
import JobConfig
import JobControl
import JobHTTP
import JobValues
import Logging

/// `jobd [--config PATH] [--check]`: the command line.
public struct JobdCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "jobd",
        abstract: "Runs background jobs as promise pipelines, keeping every stage's result in SQLite or PostgreSQL.",
        discussion: """
            jobd runs in the foreground (as a systemd service, Type=notify). It reads jobd.yaml from \
            --config PATH, else $JOBD_CONFIG, else ./config/jobd.yaml, else /etc/jobd/jobd.yaml, and the job \
            definitions of the folder it names.

            Signals: SIGHUP reloads jobd.yaml and the definitions (a broken new configuration is refused and \
            the old one keeps running); SIGTERM or SIGINT stops claiming jobs, lets running stages finish \
            within shutdown-grace, and exits 0 (a second signal ends the running stages at once).

            Exit status: 0 stopped cleanly or --check found no error; 1 --check found errors; 64 bad \
            arguments; 69 the control socket is taken by another jobd or cannot be made; 73 the database \
            cannot be opened or is damaged (PostgreSQL: no such database, schema too new); 74 the database was \
            removed or replaced while jobd ran; 75 the PostgreSQL server cannot be reached; 77 the database \
            refused this user (file permissions; PostgreSQL login or privileges); 78 jobd.yaml or a definition \
            has errors (a malformed database URL too).

            Examples:
              jobd                               # run on ./config/jobd.yaml
              jobd --config /etc/jobd/jobd.yaml  # run on that file
              jobd --check                       # validate; with PostgreSQL, also log in and check the schema
              jobd --hash-password < pw.txt      # a password hash for the dashboard's users file
              jobd --make-token                  # a script's token, and its hash for the users file
            """,
        version: JobdVersion.string)

    @Option(name: .long, help: ArgumentHelp("The jobd.yaml to use.", valueName: "path"))
    public var config: String?

    @Flag(
        name: .long,
        help:
            "Validate jobd.yaml and every definition, print each problem with file:line, and exit (0: no error, 1: errors). A SQLite database is not touched; a PostgreSQL one is logged in to and checked, nothing changed (exit 73, 75 or 77 when it cannot be used)."
    )
    public var check = false

    @Flag(
        name: .customLong("hash-password"),
        help:
            "Read a password from stdin (its first line) and print its hash for a line NAME:ROLE:HASH of the dashboard's users file (http.users); nothing else is done."
    )
    public var hashPassword = false

    @Flag(
        name: .customLong("make-token"),
        help:
            "Print a new API token for a script (first line) and its hash for a line NAME:ROLE:HASH of the dashboard's users file (second line); nothing else is done. jobd keeps only the hash."
    )
    public var makeToken = false

    public init() {}

    /// Parses the process's arguments, runs, and exits.
    public static func runFromCommandLine() async {
        await main()
    }

    public func run() async throws {
        if hashPassword { return try Self.printPasswordHash() }
        if makeToken {
            let (token, hash) = APIToken.make()
            print(token + "\n" + hash)
            return
        }
        let location: ConfigLocator.Location
        do {
            location = try ConfigLocator.locate(
                explicitPath: config, environment: ProcessInfo.processInfo.environment,
                currentDirectory: FileManager.default.currentDirectoryPath)
        } catch {
            printError("jobd: \(error)")
            throw ArgumentParser.ExitCode(check ? JobdExit.checkFailed : JobdExit.config)
        }
        let result = Configuration.load(at: location)
        if check {
            var status = Self.report(result, location: location)
            if status == JobdExit.ok, let config = result.value?.daemon,
                case let .postgres(url) = config.databaseLocation
            {
                let database = await Daemon.checkDatabase(config, url: url)
                print(database.line)
                status = database.status
            }
            throw ArgumentParser.ExitCode(status)
        }
        guard let configuration = result.value else {
            for diagnostic in result.diagnostics { printError(diagnostic.description) }
            printError(
                "jobd: not started: \(result.diagnostics.errorCount) error(s) in the configuration (\(location))")
            throw ArgumentParser.ExitCode(JobdExit.config)
        }
        let output = LogOutput(format: LogOutput.detectFormat(), level: Logger.Level(configuration.daemon.log.level))
        let code = await Daemon.run(location: location, configuration: configuration, output: output)
        throw ArgumentParser.ExitCode(code)
    }

    /// `--hash-password`: the first line of stdin, hashed, on stdout. The
    /// password is never an argument, where `ps` would show it.
    static func printPasswordHash() throws {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            printError("jobd: --hash-password reads the password from stdin; none was given")
            throw ArgumentParser.ExitCode(JobdExit.usage)
        }
        print(try PasswordHash.make(line))
    }

    /// `--check`: every diagnostic, then a summary line. Gives the exit status.
    static func report(_ result: LoadResult<Configuration>, location: ConfigLocator.Location) -> Int32 {
        for diagnostic in result.diagnostics { print(diagnostic.description) }
        let errors = result.diagnostics.errorCount
        let warnings = result.diagnostics.warningCount
        if let configuration = result.value {
            let names = configuration.definitions.names
            print(
                "ok: \(location.path): \(names.count) definition(s): \(DefinitionSet.summary(of: names))"
                    + (warnings > 0 ? "; \(warnings) warning(s)" : ""))
            return JobdExit.ok
        }
        print(
            "\(errors) error(s)" + (warnings > 0 ? ", \(warnings) warning(s)" : "")
                + " in \(location.path) and its definitions")
        return JobdExit.checkFailed
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
