import ArgumentParser
import JobEngine
import JobStore

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
        guard duration > .zero else { throw ValidationError("invalid duration \"\(text)\": it must be longer than zero") }
        return duration
    }

    /// A job id: a positive integer.
    @Sendable
    static func jobID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else {
            throw ValidationError("invalid job id \"\(text)\": a job id is a positive integer, as submit prints it")
        }
        return id
    }
}

/// A state to list (`--state`).
enum StateArgument: String, CaseIterable, ExpressibleByArgument, Sendable {
    case pending, running, fulfilled, rejected, cancelled

    var state: JobState { JobState(rawValue: rawValue) ?? .pending }
}
