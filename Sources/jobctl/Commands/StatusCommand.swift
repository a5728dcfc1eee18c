import ArgumentParser
import Foundation
import JobStore

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a job and every one of its stages.",
        discussion: """
            For each stage: its state, attempts, how long it took, and its value or error. On a terminal \
            values and errors are cut to fit a line (--full shows them whole); --json gives every value \
            whole, with the job's earlier attempts (after a retry) and its events. Reads the database, \
            so it works while jobd is stopped.

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
            let config = try session.daemonConfig()
            try await session.withStore(config, creating: false) { store in
                guard let store, let detail = try await store.job(id) else {
                    throw Session.unknownJob(id, config, storeExists: store != nil)
                }
                let history = detail.job.attempt > 1 ? try await store.attemptHistory(of: id) : []
                let events = try await store.events(of: id)
                if session.json {
                    session.console.out(JobJSON.detail(detail, history: history, events: events).pretty)
                } else {
                    let text = JobText(console: session.console, shorten: session.console.stdoutIsTerminal && !full, now: Date())
                    session.console.out(text.page(detail, history: history, events: events))
                }
            }
        }
    }
}
