import Foundation
import JobStore
import JobStoreSQLite
import Testing

/// Output on a terminal (a pseudo-terminal from util-linux `script`):
/// colour, values cut to the width, live progress — and none of it with
/// `NO_COLOR` or off a terminal.
@Suite struct TerminalTests {
    static let escape = "\u{1B}["

    /// Runs jobctl on a pseudo-terminal 80 columns wide; stdout and stderr
    /// both arrive in `stdout`.
    private func onTerminal(
        _ sandbox: Sandbox, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> ChildResult {
        let words = [jobctlPath] + arguments + ["--config", sandbox.configPath]
        let command =
            "stty cols 80 rows 40; "
            + words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ")
        return try await runChild(
            "/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment,
            directory: sandbox.folder)
    }

    private func seeded(_ states: [JobState], result: String = "out") async throws -> Sandbox {
        let sandbox = try Sandbox()
        for state in states { _ = try await sandbox.seed(state, result: result) }
        return sandbox
    }

    @Test func statesAreColouredOnlyOnATerminalWithoutNoColor() async throws {
        let sandbox = try await seeded([.fulfilled, .rejected])
        let coloured = try await onTerminal(sandbox, ["list"])
        #expect(coloured.status == 0, "\(coloured)")
        #expect(coloured.out.contains(Self.escape + "32mfulfilled" + Self.escape + "0m"), "\(coloured)")
        #expect(coloured.out.contains(Self.escape + "31mrejected" + Self.escape + "0m"))

        let noColor = try await onTerminal(sandbox, ["list"], environment: ["NO_COLOR": "1"])
        #expect(noColor.status == 0)
        #expect(noColor.out.contains("fulfilled") && !noColor.out.contains(Self.escape), "\(noColor)")

        let piped = try await sandbox.jobctl(["list"])
        #expect(piped.out.contains("fulfilled") && !piped.out.contains(Self.escape))
    }

    @Test func valuesAreCutToTheTerminalsWidthUnlessFull() async throws {
        let long = String(repeating: "0123456789", count: 20)
        let sandbox = try await seeded([.fulfilled], result: long)
        let cut = try await onTerminal(sandbox, ["status", "1"], environment: ["NO_COLOR": "1"])
        #expect(cut.status == 0, "\(cut)")
        let lines = cut.out.components(separatedBy: "\r\n")
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.map(\.count))")
        #expect(lines.contains { $0.hasPrefix("  result") && $0.hasSuffix("…") }, "\(cut)")
        #expect(!cut.out.contains(long))

        let full = try await onTerminal(sandbox, ["status", "1", "--full"], environment: ["NO_COLOR": "1"])
        #expect(full.out.contains(long))
    }

    @Test func submitWaitShowsWhichStageRuns() async throws {
        let sandbox = try Sandbox()
        let daemon = try TestDaemon(sandbox)
        let result = try await onTerminal(
            sandbox, ["submit", "slow", "--input", "rested", "--wait", "--timeout", "60s"])
        await daemon.stop()
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("job 1 running: stage 1/2 nap (then)"), "\(result)")
        #expect(result.out.contains("\r" + Self.escape + "2K"), "the progress line is cleared")
        #expect(result.out.contains("rested"))
        #expect(result.out.contains("jobctl: job 1 fulfilled in "))
    }
}
