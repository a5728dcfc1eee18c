import ArgumentParser
import Foundation
import JobConfig
import JobControl

/// The root command: `jobctl SUBCOMMAND …`.
///
/// Every command gives its `commandName`: otherwise the argument parser
/// derives each name from the type's with `String(describing:)`, runtime
/// type lookups that were a measurable part of a `jobctl status` run.
struct Jobctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobctl",
        abstract: "Submit jobs to jobd, follow them, cancel and retry them.",
        discussion: """
            jobctl reads and writes jobd's database (SQLite, or PostgreSQL shared by several hosts) directly, so \
            it works while jobd is stopped, or on a host without one: submitted jobs wait there, and `status` and \
            `list` read them. When jobd runs here, jobctl nudges it over its unix socket so a new job starts at \
            once (on PostgreSQL, every jobd hears of it from the database too). jobctl finds jobd.yaml as jobd does: --config, \
            else $JOBD_CONFIG, else ./config/jobd.yaml, else /etc/jobd/jobd.yaml.

            Examples:
              jobctl submit hello --input world         # prints the job's id
              jobctl submit hello --input world --wait  # prints its result
              jobctl status 42                          # job 42, every stage
              jobctl list --pending                     # waiting or running
              jobctl list --resolved --definition hello --limit 10 --json

            \(ExitStatus.helpTable)
            """,
        version: JobdVersion.string,
        subcommands: [
            Submit.self, Status.self, List.self, Wait.self, Logs.self, Cancel.self, Retry.self, Delete.self,
            Definitions.self, Validate.self, Daemon.self, Metrics.self, CalendarCommand.self, Schedules.self,
            PauseCommand.self, ResumeCommand.self, Pauses.self, CopyDatabase.self,
        ])
}

/// Parses the command line, runs the command, and turns every failure into
/// one line on stderr and an exit status (see ``ExitStatus``).
@main
enum JobctlMain {
    static func main() async {
        let console = Console.current()
        let command: any ParsableCommand
        do {
            command = try Jobctl.parseAsRoot(
                GlobalOptions.leadingOptionsMoved(Array(CommandLine.arguments.dropFirst())))
        } catch {
            // Help, --version and completion scripts are "errors" that exit 0.
            guard Jobctl.exitCode(for: error) != .success else { Jobctl.exit(withError: error) }
            let message = Jobctl.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            console.note("error: \(message) (see jobctl help)")
            exit(Jobctl.exitCode(for: error).rawValue)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let failure as JobctlError {
            // A message may quote what a database row or a file holds.
            console.note("error: " + Formatting.oneLine(failure.message))
            if !failure.details.isEmpty {
                console.err(failure.details.joined(separator: "\n") + "\n")
            }
            exit(failure.exitStatus.code)
        } catch {
            // CleanExit (`jobctl` alone prints help) and anything unexpected.
            Jobctl.exit(withError: error)
        }
        exit(ExitStatus.ok.code)
    }
}
