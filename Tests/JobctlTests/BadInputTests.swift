import Foundation
import JobConfig
import JobControl
import JobStore
import JobStoreSQLite
import Testing

/// Bad input: one line on stderr, the documented exit status, no row written.
@Suite struct BadInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [String]
        var stdin: String?
        var status: Int32
        var says: String

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "unknown definition", arguments: ["submit", "nope", "--input", "x"], status: 67,
            says: "no job definition named nope (known: failing, hello, slow)"),
        Case(
            name: "input over the cap", arguments: ["submit", "hello", "--input", String(repeating: "x", count: 1025)],
            status: 65, says: "the --input text is 1025 bytes, over the value cap of 1024 bytes"),
        Case(
            name: "input file over the cap", arguments: ["submit", "hello", "--input-file", "-"],
            stdin: String(repeating: "y", count: 5000), status: 65,
            says: "the input on stdin is more than 1024 bytes, over the value cap of 1024 bytes"),
        Case(
            name: "bad duration", arguments: ["submit", "hello", "--delay", "30"], status: 64,
            says: "invalid duration \"30\": a duration needs a unit"),
        Case(
            name: "fractional duration", arguments: ["submit", "hello", "--delay", "1.5s"], status: 64,
            says: "fractions are not accepted"),
        Case(
            name: "zero timeout", arguments: ["wait", "1", "--timeout", "0s"], status: 64,
            says: "it must be longer than zero"),
        Case(name: "non-numeric id", arguments: ["status", "abc"], status: 64, says: "invalid job id \"abc\""),
        Case(name: "zero id", arguments: ["cancel", "0"], status: 64, says: "invalid job id \"0\""),
        Case(name: "unknown id", arguments: ["status", "999"], status: 67, says: "no job 999"),
        Case(name: "unknown id to cancel", arguments: ["cancel", "999"], status: 67, says: "no job 999"),
        Case(name: "unknown id to retry", arguments: ["retry", "999"], status: 67, says: "no job 999"),
        Case(name: "unknown id to wait for", arguments: ["wait", "999"], status: 67, says: "no job 999"),
        Case(
            name: "unreadable input file", arguments: ["submit", "hello", "--input-file", "/nonexistent/input"],
            status: 66, says: "cannot read the input file /nonexistent/input: No such file or directory"),
        Case(
            name: "input file is a folder", arguments: ["submit", "hello", "--input-file", "/tmp"],
            status: 66, says: "cannot read the input file /tmp: Is a directory"),
        Case(
            name: "unreadable batch", arguments: ["submit", "hello", "--batch", "/nonexistent/batch"],
            status: 66, says: "cannot read the batch file /nonexistent/batch"),
        Case(
            name: "two inputs", arguments: ["submit", "hello", "--input", "a", "--input-file", "-"], status: 64,
            says: "give --input or --input-file, not both"),
        Case(
            name: "batch with a key", arguments: ["submit", "hello", "--batch", "-", "--key", "k"], status: 64,
            says: "--key names one job"),
        Case(
            name: "timeout without wait", arguments: ["submit", "hello", "--timeout", "5s"], status: 64,
            says: "--timeout applies to --wait"),
        Case(
            name: "unknown flag", arguments: ["submit", "hello", "--colour"], status: 64,
            says: "Unknown option '--colour'"),
        Case(
            name: "limit out of range", arguments: ["list", "--limit", "0"], status: 64,
            says: "--limit must be within 1…1000, not 0"),
        Case(
            name: "two filters", arguments: ["list", "--pending", "--resolved"], status: 64,
            says: "give one of --pending, --resolved and --state"),
        Case(name: "unknown state", arguments: ["list", "--state", "done"], status: 64, says: "'done'"),
        Case(
            name: "retry of a pending job", arguments: ["retry", "1"], status: 65,
            says: "cannot retry job 1: it is pending"),
        // Unbounded reads, times past year 9999, negative numbers.
        Case(
            name: "batch of /dev/zero", arguments: ["submit", "hello", "--batch", "/dev/zero"], status: 65,
            says: "line 1 of the batch is more than 1024 bytes, over the value cap of 1024 bytes"),
        Case(
            name: "delay past ten years", arguments: ["submit", "hello", "--delay", "3000000d"], status: 64,
            says: "it is too long (at most 3650d, ten years)"),
        Case(
            name: "delay past Int64 milliseconds", arguments: ["submit", "hello", "--delay", "106751991167d"],
            status: 64,
            says: "it is too long (at most 3650d, ten years)"),
        Case(
            name: "retry delay past ten years", arguments: ["retry", "1", "--delay", "106751991167d"], status: 64,
            says: "it is too long (at most 3650d, ten years)"),
        Case(
            name: "negative delay", arguments: ["submit", "hello", "--delay", "-5s"], status: 64,
            says: "durations cannot be negative"),
        Case(
            name: "negative limit", arguments: ["list", "--limit", "-1"], status: 64,
            says: "--limit must be within 1…1000, not -1"),
    ]

    @Test(arguments: cases)
    func refusedWithOneLineAndNothingWritten(_ bad: Case) async throws {
        let sandbox = try Sandbox(configExtra: "store: { value-cap: 1KiB }")
        // One job first, so that the database exists and a stray write would show.
        let first = try await sandbox.jobctl(["submit", "hello", "--input", "first"])
        #expect(first.status == 0 && first.out == "1\n", "\(first)")
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.folder + "/var").sorted()

        let result = try await sandbox.jobctl(bad.arguments, stdin: bad.stdin.map { Data($0.utf8) })
        #expect(result.status == bad.status, "\(result)")
        #expect(result.out.isEmpty, "\(result)")
        #expect(result.errLines.count == 1, "\(result)")
        #expect(result.errLines.first?.hasPrefix("jobctl: error: ") == true, "\(result)")
        #expect(result.stderr.contains(bad.says), "\(result)")
        #expect(try await sandbox.jobCount() == 1)
        let job = try await sandbox.job(1)
        #expect(job.job.state == .pending && job.job.attempt == 1 && !job.job.cancelRequested)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.folder + "/var").sorted() == files)
    }

    @Test func withJSONTheErrorIsAlsoAnObjectOnStdout() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.jobctl(["status", "42", "--json"])
        #expect(result.status == 67, "\(result)")
        let error = try #require(try result.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "unknown-job")
        #expect(error["exit_status"] as? Int == 67)
        #expect((error["message"] as? String)?.contains("no job 42") == true)
        #expect(result.errLines.count == 1)
    }
}
