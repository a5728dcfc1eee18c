import Foundation
import Testing

/// Shell completions and the help that the man page is made from.
@Suite struct CompletionTests {
    static let subcommands = [
        "submit", "status", "list", "wait", "logs", "cancel", "retry", "definitions", "validate", "daemon", "metrics",
        "calendar", "schedules", "pause", "resume", "pauses",
    ]

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsKnowEveryCommand(_ shell: String) async throws {
        let result = try await runChild(jobctlPath, ["--generate-completion-script", shell], directory: "/")
        #expect(result.status == 0, "\(result)")
        for command in Self.subcommands { #expect(result.out.contains(command), "\(shell): \(command)") }
        for option in ["input-file", "batch", "pending", "timeout", "config", "json"] {
            // fish names a long option `-l 'NAME'`; bash and zsh write `--NAME`.
            let spelled = shell == "fish" ? "-l '\(option)'" : "--\(option)"
            #expect(result.out.contains(spelled), "\(shell): \(spelled)")
        }
    }

    @Test func theBashScriptParses() async throws {
        let script = try await runChild(jobctlPath, ["--generate-completion-script", "bash"], directory: "/")
        let check = try await runChild("/bin/bash", ["-n"], stdin: script.stdout, directory: "/")
        #expect(check.status == 0, "\(check)")
    }

    @Test func dumpedHelpDescribesEveryCommand() async throws {
        let result = try await runChild(jobctlPath, ["--experimental-dump-help"], directory: "/")
        #expect(result.status == 0)
        let root = try #require(try result.json()["command"] as? [String: Any])
        let names = (root["subcommands"] as? [[String: Any]])?.compactMap { $0["commandName"] as? String } ?? []
        #expect(Set(Self.subcommands).isSubset(of: Set(names)), "\(names)")
        #expect((root["discussion"] as? String)?.contains("Exit status:") == true)
    }

    @Test(arguments: subcommands)
    func everyCommandHasHelpWithExamples(_ command: String) async throws {
        let result = try await runChild(jobctlPath, ["help", command], directory: "/")
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("Examples:"))
        #expect(result.out.contains("jobctl \(command == "daemon" ? "daemon" : command)"))
        #expect(result.out.contains("--json"))
        #expect(result.out.contains("--config"))
    }
}
