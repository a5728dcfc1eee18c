import ArgumentParser
import Foundation
import JobConfig
import JobDatabase
import JobStore
import JobStorePostgres
import JobValues

/// `jobctl copy-database --from PATH [--to URL]`: moving from SQLite to PostgreSQL.
struct CopyDatabase: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy-database",
        abstract: "Copy a SQLite job database into an empty PostgreSQL one.",
        discussion: """
            For moving from one host on SQLite to several sharing PostgreSQL. Every job is copied with its \
            stages, earlier attempts, events, stage logs, children and --after dependencies, ids kept, with \
            the audit trail of actions and the schedules' marks, in one transaction: all or nothing. The target is \
            --to URL, else the database of jobd.yaml (which must then be a postgres:// URL); its schema is \
            created if missing and must hold no job and no event (schedule marks left by a jobd that only \
            started there are replaced by those copied). The password comes from the URL, $PGPASSWORD or \
            $CREDENTIALS_DIRECTORY/db-password, as for jobd. Stop jobd first: jobs running then are copied as \
            running and resume once their leases expire. The SQLite file is only read (upgraded to this \
            jobd's schema first, if older).

            Examples:
              jobctl copy-database --from /var/lib/jobd/jobd.sqlite
              jobctl copy-database --from old.sqlite --to postgres://jobd@db.example.com/jobs --json
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: ArgumentHelp("The SQLite database to copy.", valueName: "path"), completion: .file())
    var from: String

    @Option(
        help: ArgumentHelp("The PostgreSQL database to copy into (default: jobd.yaml's database).", valueName: "url"))
    var to: String?

    func run() async throws {
        try await options.run { session in
            let target = try configuration(session)
            guard FileManager.default.fileExists(atPath: from) else {
                throw JobctlError(.unreadableInput, "no SQLite database at \(from)")
            }
            let report = try await PostgresJobStore.copySQLiteDatabase(at: from, into: target)
            if session.json {
                session.console.out(
                    JSON.fields([
                        ("from", .string(from)), ("to", .string(target.description)),
                        ("jobs", .int(Int64(report.jobs))), ("stages", .int(Int64(report.stages))),
                        ("job_attempts", .int(Int64(report.jobAttempts))),
                        ("stage_attempts", .int(Int64(report.stageAttempts))),
                        ("events", .int(Int64(report.events))),
                        ("stage_logs", .int(Int64(report.stageLogs))), ("actions", .int(Int64(report.actions))),
                        ("job_dependencies", .int(Int64(report.jobDependencies))),
                    ]).pretty)
            } else {
                session.console.out(
                    "copied \(report.jobs) job(s), \(report.stages) stage(s), \(report.jobAttempts) "
                        + "earlier attempt(s), \(report.events) event(s), \(report.stageLogs) stage log row(s), "
                        + "\(report.actions) action(s) and \(report.jobDependencies) dependency(ies) from \(from) "
                        + "into \(target)\n")
            }
        }
    }

    /// `--to`, else jobd.yaml's database; a URL either way.
    private func configuration(_ session: Session) throws -> PostgresJobStoreConfiguration {
        var config: DaemonConfiguration
        if let to {
            guard PostgresURL.isURL(to) else {
                // Not quoted: it may hold a password.
                throw JobctlError(.usage, "--to takes a URL that starts with postgres:// or postgresql:// (lowercase)")
            }
            config = DaemonConfiguration.defaults(relativeTo: FileManager.default.currentDirectoryPath)
            // The value cap of jobd.yaml if there is one: the copy refuses what jobd would.
            if let found = try? session.daemonConfig() { config.store = found.store }
            config.database = to
        } else {
            config = try session.daemonConfig()
            guard config.databaseLocation.isShared else {
                throw JobctlError(
                    .usage,
                    "the database of jobd.yaml is \(config.database), not a PostgreSQL URL: give --to postgres://…")
            }
        }
        do {
            return try JobDatabase.postgresConfiguration(
                url: config.database, maxValueBytes: config.store.valueCap.bytes,
                applicationName: "jobctl copy-database",
                environment: session.environment)
        } catch let error as JobStoreError {
            throw JobctlError(error)
        }
    }
}
