import ArgumentParser
import Foundation
import JobCalendar
import JobStore
import JobValues

/// Which jobs a bulk `retry`, `cancel` or `delete` acts on: every option given must hold.
struct JobFilterOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Only jobs in this state; repeat for several.", valueName: "state"))
    var state: [StateArgument] = []

    @Option(help: ArgumentHelp("Only jobs of this definition.", valueName: "name"))
    var definition: String?

    @Option(
        help: ArgumentHelp(
            "Only jobs created at or after this time: RFC 3339 (2026-11-24T09:00:00Z) or a duration ago (1h).",
            valueName: "time"))
    var since: String?

    @Option(
        help: ArgumentHelp(
            "Only jobs created before this time: RFC 3339 or a duration ago.", valueName: "time"))
    var until: String?

    @Option(help: ArgumentHelp("Only the job with this idempotency key (submit --key).", valueName: "key"))
    var key: String?

    @Option(
        help: ArgumentHelp(
            "Only jobs whose input, result, error or key hold every word of this text.", valueName: "text"))
    var match: String?

    @Option(
        help: ArgumentHelp("Only the child jobs of this job (its each: or definition: stages).", valueName: "id"),
        transform: Arguments.jobID)
    var parent: Int64?

    func validate() throws {
        if let match, SearchText.words(match).isEmpty {
            throw ValidationError("--match needs at least one word (letters or digits), not \"\(match)\"")
        }
    }

    var isEmpty: Bool {
        state.isEmpty && definition == nil && since == nil && until == nil && key == nil && match == nil
            && parent == nil
    }

    /// The filter as written, in one order whatever the order on the command
    /// line: what an interrupted run is found again by.
    var text: String {
        var parts: [String] = []
        for state in StateArgument.allCases where self.state.contains(state) {
            parts.append("--state \(state.rawValue)")
        }
        if let definition { parts.append("--definition \(Self.quoted(definition))") }
        if let since { parts.append("--since \(Self.quoted(since))") }
        if let until { parts.append("--until \(Self.quoted(until))") }
        if let key { parts.append("--key \(Self.quoted(key))") }
        if let match { parts.append("--match \(Self.quoted(match))") }
        if let parent { parts.append("--parent \(parent)") }
        return parts.joined(separator: " ")
    }

    /// The selection, its times made absolute from `now`.
    func selection(now: Date) throws(JobctlError) -> JobSelection {
        JobSelection(
            states: state.isEmpty ? nil : Set(state.map(\.state)), definition: definition, key: key,
            createdSince: try since.map { text throws(JobctlError) in try Self.time(text, option: "--since", now: now)
            },
            createdUntil: try until.map { text throws(JobctlError) in try Self.time(text, option: "--until", now: now)
            },
            match: match, parentID: parent)
    }

    /// An RFC 3339 time, or a duration before `now`.
    static func time(_ text: String, option: String, now: Date) throws(JobctlError) -> Date {
        if let duration = try? Duration(parsing: text) {
            return now.addingTimeInterval(-Double(duration.components.seconds))
        }
        do {
            return try RFC3339.date(text)
        } catch {
            throw JobctlError(
                .usage,
                "invalid \(option) \"\(text)\": write an RFC 3339 time (2026-11-24T09:00:00Z) or a duration ago (1h, 30m): "
                    + error.reason)
        }
    }

    private static func quoted(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) || "-_.:+/@".unicodeScalars.contains($0)
            }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// How a bulk action runs: the confirmation, a dry run, its batches.
struct BulkOptions: ParsableArguments {
    @Flag(help: "Act on the jobs the filter selects; without it, jobctl prints how many there are and changes nothing.")
    var yes = false

    @Flag(
        name: .customLong("dry-run"), help: "Print the ids of the jobs the filter selects, one a line; change nothing.")
    var dryRun = false

    @Option(
        name: .customLong("batch-size"), parsing: .unconditional,
        help: ArgumentHelp("Jobs changed per transaction (1 to 1000).", valueName: "n"))
    var batchSize = 500

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Wait this long between batches, to leave the database to jobd.", valueName: "duration"),
        transform: Arguments.duration)
    var pause: Duration?

    func validate() throws {
        guard (1...ActionRecord.maxBatchSize).contains(batchSize) else {
            throw ValidationError("--batch-size must be 1 to \(ActionRecord.maxBatchSize), not \(batchSize)")
        }
        if yes && dryRun { throw ValidationError("give --yes or --dry-run, not both") }
    }

    /// The run for `filter`, or for job `id` alone.
    func run(_ verb: ActionVerb, filter: JobFilterOptions, now: Date = Date()) throws(JobctlError) -> BulkRun {
        BulkRun(
            verb: verb, filterText: filter.text, selection: try filter.selection(now: now), yes: yes, dryRun: dryRun,
            batchSize: batchSize, pause: pause)
    }
}
