import ArgumentParser
import Foundation
import JobConfig
import JobControl
import JobStore

struct Logs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print what a job's stages wrote to stderr, each line with its time.",
        discussion: """
            Prints the lines of the job's current attempt (after a `retry`, the new one), stage by stage and \
            attempt by attempt: `TIME STAGE#ATTEMPT LINE`. The stdout of get, tap, catch, ensure and finally \
            stages (not the chain's value) is kept too, marked: `TIME STAGE#ATTEMPT (stdout) LINE`. On a terminal, control characters and terminal \
            escapes are shown escaped (\\u{1b}) and bytes that are not UTF-8 as \\xFF; into a pipe or file each \
            line goes as written. Where an attempt wrote more than its `logs: { max }`, a line says how many \
            lines were dropped between the head and the tail. --json prints one object per line.

            --follow prints lines as they are written until the job ends, then exits as `jobctl wait` does: \
            0 fulfilled, 1 rejected or cancelled. While jobd on this host runs the job, the lines come from it \
            through its socket as they are read; otherwise (another host runs it, or no jobd runs here) from \
            the database, within a second.

            Examples:
              jobctl logs 42
              jobctl logs 42 --stage fetch --attempt 2
              jobctl logs 42 --follow
              jobctl logs 42 --json | jq -r 'select(.stage == "fetch") | .line'
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The job's id.", transform: Arguments.jobID)
    var id: Int64

    @Option(help: ArgumentHelp("Only this stage: its name, or its number (1 is the first).", valueName: "name|N"))
    var stage: String?

    @Option(
        help: ArgumentHelp("Only this attempt of the stage (1 is the first).", valueName: "N"),
        transform: Arguments.attempt)
    var attempt: Int?

    @Flag(help: "Keep printing lines as they are written until the job ends; exit as `jobctl wait` does.")
    var follow = false

    /// How often --follow reads the database.
    static let pollInterval: Duration = .milliseconds(200)

    func run() async throws {
        try await options.run { session in
            try await session.withJobStore(job: id) { config, store in
                guard var detail = try await store.job(id) else { throw Session.unknownJob(id, config) }
                guard let logs = store as? any StageLogStore else {
                    throw JobctlError(.internalError, "this database's store keeps no stage logs")
                }
                let position = try stage.map { try Self.position(of: $0, in: detail) }
                let printer = LogPrinter(console: session.console, json: session.json, job: detail)
                var query = StageLogQuery(
                    jobID: id, jobAttempt: detail.job.attempt, position: position, attempt: attempt, limit: 1000)
                /// Prints the lines of the database after the cursor, all of them.
                func readDatabase() async throws {
                    while true {
                        let page = try await logs.stageLog(query)
                        for entry in page { printer.print(entry) }
                        query.after = page.last?.cursor ?? query.after
                        if page.count < query.limit { break }
                    }
                }
                var live = follow ? LiveLogSource(socketPath: config.socket) : nil
                while true {
                    // Read the job's state first: lines written before it ended are in by then.
                    let ended = detail.job.state.isResolved
                    var ranHere = false
                    // While jobd on this host runs the job, it gives the lines as they come; the
                    // database has those it no longer holds (`memory_from`), read first.
                    while !ended, let held = live?.read(id, after: query.after), held.running {
                        ranHere = true
                        // Lines up to `memory_from` are in the database only; without it jobd
                        // holds none of the job's lines.
                        let databaseFirst =
                            held.memoryFrom.map { from in query.after.map { $0 < StageLogCursor(from) } ?? true }
                            ?? true
                        if databaseFirst { try await readDatabase() }
                        for line in held.lines {
                            let entry = StageLogEntry(line)
                            guard query.after.map({ entry.cursor > $0 }) ?? true else { continue }
                            guard entry.cursor.jobAttempt == query.jobAttempt else {
                                // The job was retried meanwhile: its end has been written.
                                live?.stop()
                                break
                            }
                            query.after = entry.cursor
                            if query.position.map({ $0 == entry.cursor.position }) ?? true,
                                query.attempt.map({ $0 == entry.cursor.attempt }) ?? true
                            {
                                printer.print(entry)
                            }
                        }
                    }
                    try await readDatabase()
                    if !follow { return }
                    if ended { break }
                    // It just ended here: its end is being written, no need to wait a whole poll.
                    try await Task.sleep(for: ranHere ? .milliseconds(20) : Self.pollInterval)
                    guard let next = try await store.job(id) else {
                        throw JobctlError(.unknownJob, "job \(id) disappeared while following it (pruned?)")
                    }
                    detail = next
                }
                let job = detail.job
                if job.state == .fulfilled { return }
                var failure = JobctlError(
                    job.state == .cancelled ? .jobCancelled : .jobRejected, Wait.failureLine(detail))
                failure.reportedOnStdout = session.json
                throw failure
            }
        }
    }

    /// `--stage`: a stage's name, else its 1-based number.
    static func position(of stage: String, in detail: JobDetail) throws -> Int {
        if let match = detail.stages.first(where: { $0.name == stage }) { return match.position }
        if let number = Int(stage), (1...detail.stages.count).contains(number) { return number - 1 }
        let names = detail.stages.map(\.name).joined(separator: ", ")
        throw JobctlError(
            .usage,
            "job \(detail.job.id) has no stage \"\(Formatting.oneLine(stage, limit: 60))\"; its stages are \(names) "
                + "(or 1…\(detail.stages.count))")
    }
}

/// Prints log rows as text or JSON lines.
struct LogPrinter {
    let console: Console
    let json: Bool
    let job: JobDetail

    func print(_ entry: StageLogEntry) {
        let cursor = entry.cursor
        let name = job.stages.first { $0.position == cursor.position }?.name ?? "stage\(cursor.position + 1)"
        if json {
            var fields: [(String, JSON)] = [
                ("job_id", .number(String(job.job.id))), ("job_attempt", .number(String(cursor.jobAttempt))),
                ("stage", .string(name)), ("position", .number(String(cursor.position))),
                ("attempt", .number(String(cursor.attempt))), ("seq", .number(String(cursor.sequence))),
                ("at", .string(Formatting.timestamp(entry.at))),
            ]
            switch entry.content {
            case let .line(bytes):
                fields.append(("stream", .string(entry.stream.rawValue)))
                fields.append(("line", Formatting.valueJSON(Data(bytes))))
            case let .dropped(lines, bytes):
                fields.append(("dropped_lines", .number(String(lines))))
                fields.append(("dropped_bytes", .number(String(bytes))))
            }
            console.outBytes(Data(JSON.fields(fields).compactJSON + [UInt8(ascii: "\n")]))
            return
        }
        let prefix = "\(Formatting.timestamp(entry.at)) \(name)#\(cursor.attempt) "
        switch entry.content {
        case let .line(bytes):
            // Stdout that did not become the value is marked; stderr is not.
            let prefix = entry.stream == .stdout ? prefix + "(stdout) " : prefix
            if console.stdoutIsTerminal {
                console.out(prefix + Self.terminalText(bytes) + "\n")
            } else {
                console.outBytes(Data(prefix.utf8) + Data(bytes) + Data([UInt8(ascii: "\n")]))
            }
        case let .dropped(lines, bytes):
            console.out(
                prefix + console.paint("… \(lines) lines (\(bytes) bytes) dropped: over the stage's logs max …", .dim)
                    + "\n")
        }
    }

    /// A line as a terminal may show it: control characters and escapes
    /// escaped, each byte that is not UTF-8 as `\xFF`.
    static func terminalText(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return Formatting.oneLine(text) }
        var output = ""
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length =
                lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            if length > 0, index + length <= bytes.count,
                let scalar = String(validating: bytes[index..<(index + length)], as: UTF8.self)
            {
                output += Formatting.oneLine(scalar)
                index += length
            } else {
                let hex = String(lead, radix: 16, uppercase: true)
                output += "\\x" + (hex.count < 2 ? "0" : "") + hex
                index += 1
            }
        }
        return output
    }
}
