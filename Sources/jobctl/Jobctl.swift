import ArgumentParser
import JobEngine

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
            jobctl reads and writes jobd's SQLite database directly, so it works while jobd is stopped: \
            submitted jobs wait there, and `status` and `list` read them. When jobd runs, jobctl nudges it \
            over its unix socket so a new job starts at once. jobctl finds jobd.yaml as jobd does: --config, \
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
            Submit.self, Status.self, List.self, Wait.self, Cancel.self, Retry.self,
            Definitions.self, Validate.self, Daemon.self,
        ])
}
