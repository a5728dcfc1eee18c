import Foundation
import JobConfig
import JobControl
import Testing

/// Finding jobd.yaml as jobd does; `validate` and `definitions`.
@Suite struct ConfigTests {
    @Test func findsTheConfigLikeJobd() async throws {
        let sandbox = try Sandbox()
        // $JOBD_CONFIG, from anywhere.
        let fromEnvironment = try await sandbox.jobctl(
            ["submit", "hello"], environment: ["JOBD_CONFIG": sandbox.configPath], config: false, directory: "/")
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        // ./config/jobd.yaml in the working directory (the sandbox's folder).
        let fromFolder = try await sandbox.jobctl(["list", "--json"], config: false)
        #expect(fromFolder.status == 0, "\(fromFolder)")
        #expect((try fromFolder.json()["jobs"] as? [Any])?.count == 1)
        // --config wins over $JOBD_CONFIG.
        let explicit = try await sandbox.jobctl(
            ["list", "--json"], environment: ["JOBD_CONFIG": "/nonexistent/jobd.yaml"])
        #expect(explicit.status == 0, "\(explicit)")
    }

    /// `--config` and `--json` may also come before the command's name.
    @Test func theCommonOptionsMayComeBeforeTheCommand() async throws {
        let sandbox = try Sandbox()
        let submitted = try await sandbox.jobctl(
            ["--config", sandbox.configPath, "submit", "hello", "--input", "x"], config: false, directory: "/")
        #expect(submitted.status == 0, "\(submitted)")
        let listed = try await sandbox.jobctl(
            ["--json", "--config=\(sandbox.configPath)", "list"], config: false, directory: "/")
        #expect(listed.status == 0, "\(listed)")
        #expect((try listed.json()["jobs"] as? [Any])?.count == 1)
        // An option of one command only stays where the parser can say so.
        let misplaced = try await sandbox.jobctl(["--limit", "3", "list"])
        #expect(misplaced.status == 64, "\(misplaced)")
    }

    @Test func aMissingConfigIsAConfigError() async throws {
        let sandbox = try Sandbox()
        let named = try await sandbox.jobctl(["list", "--config", sandbox.file("nope.yaml")], config: false)
        #expect(named.status == 78, "\(named)")
        #expect(
            named.errLines == [
                "jobctl: error: the config file \(sandbox.file("nope.yaml")) given with --config does not exist"
            ])
        let fromEnvironment = try await sandbox.jobctl(
            ["list"], environment: ["JOBD_CONFIG": sandbox.file("gone.yaml")], config: false, directory: "/")
        #expect(fromEnvironment.status == 78)
        #expect(fromEnvironment.stderr.contains("named by $JOBD_CONFIG does not exist"))
    }

    @Test func aBrokenConfigListsItsProblems() async throws {
        let sandbox = try Sandbox(configExtra: "Q: { map: { concurrency: 0 } }\nlog: { level: loud }")
        let result = try await sandbox.jobctl(["list"])
        #expect(result.status == 78, "\(result)")
        #expect(result.errLines.first?.hasPrefix("jobctl: error: the config \(sandbox.configPath) has ") == true)
        #expect(result.errLines.dropFirst().allSatisfy { $0.hasPrefix(sandbox.configPath + ":") }, "\(result)")
        #expect(result.errLines.count >= 3)

        let validate = try await sandbox.jobctl(["validate"])
        #expect(validate.status == 65, "\(validate)")
        #expect(validate.outLines.contains { $0.hasPrefix(sandbox.configPath + ":") && $0.contains("loud") })
    }

    @Test func validateChecksTheConfigAndItsDefinitions() async throws {
        let sandbox = try Sandbox()
        let good = try await sandbox.jobctl(["validate"])
        #expect(good.status == 0, "\(good)")
        #expect(good.out == "ok: \(sandbox.configPath) and 3 definitions\n")

        try "pipeline:\n  - then: a\n    run: [true]\n    retry: { attempts: lots }\n"
            .write(toFile: sandbox.folder + "/config/jobs.d/broken.yaml", atomically: true, encoding: .utf8)
        let bad = try await sandbox.jobctl(["validate"])
        #expect(bad.status == 65, "\(bad)")
        let broken = sandbox.folder + "/config/jobs.d/broken.yaml"
        #expect(bad.outLines.first?.hasPrefix("\(broken):4:") == true, "\(bad)")
        #expect(bad.outLines.last == "1 error; valid: \(sandbox.configPath) and 3 definitions")
        #expect(bad.errLines == ["jobctl: error: 1 error found"])

        let json = try await sandbox.jobctl(["validate", "--json"])
        #expect(json.status == 65)
        let object = try json.json()
        #expect(object["ok"] as? Bool == false)
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["path"] as? String == broken)
        #expect(diagnostics.first?["line"] as? Int == 4)
        #expect(diagnostics.first?["severity"] as? String == "error")
        #expect((object["definitions"] as? [String])?.sorted() == ["failing", "hello", "slow"])

        // A definition with errors cannot be submitted, and says why.
        let submit = try await sandbox.jobctl(["submit", "broken"])
        #expect(submit.status == 78, "\(submit)")
        #expect(
            submit.errLines.first?.contains("the definition broken has errors and cannot be submitted: \(broken):4:")
                == true)
        #expect(try await sandbox.jobCount() == 0)
    }

    @Test func validateNamedFiles() async throws {
        let sandbox = try Sandbox()
        let good = sandbox.file("good.yaml")
        let bad = sandbox.file("bad.yaml")
        try "pool: slow\npipeline:\n  - then: a\n    run: [true]\n".write(
            toFile: good, atomically: true, encoding: .utf8)
        try "pool: nowhere\npipeline:\n  - then: a\n    run: [true]\n".write(
            toFile: bad, atomically: true, encoding: .utf8)
        let ok = try await sandbox.jobctl(["validate", good])
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.out == "ok: \(sandbox.configPath) and 1 definition\n")
        let refused = try await sandbox.jobctl(["validate", good, bad, sandbox.file("missing.yaml")])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.out.contains("\(bad):1:7: error: "), "pool checked against the config's pools: \(refused)")
        #expect(refused.out.contains(sandbox.file("missing.yaml")))
        // Without any config, files are checked against the defaults.
        let alone = try await sandbox.jobctl(["validate", good], config: false, directory: "/")
        #expect(alone.status == 65, "the default config has no pool `slow`: \(alone)")
        #expect(alone.errLines.first?.contains("checking against the default queues and pools") == true)
    }

    @Test func definitionsListsWhatJobdLoads() async throws {
        let sandbox = try Sandbox()
        let text = try await sandbox.jobctl(["definitions"])
        #expect(text.status == 0, "\(text)")
        #expect(
            text.outLines == [
                "NAME     POOL     STAGES  TIMEOUT  DESCRIPTION",
                "failing  default       3  -",
                "hello    default       4  -        greets its input",
                "slow     slow          2  -",
            ])
        let json = try await sandbox.jobctl(["definitions", "--json"]).json()
        let definitions = try #require(json["definitions"] as? [[String: Any]])
        #expect(definitions.map { $0["name"] as? String } == ["failing", "hello", "slow"])
        let stages = try #require(definitions[1]["stages"] as? [[String: Any]])
        #expect(stages.map { $0["kind"] as? String } == ["then", "map", "map", "done"])
        #expect(stages.map { $0["action"] as? String } == ["run", "transform", "transform", "run"])
        #expect(json["problems"] as? Int == 0)

        try "pipeline: []\n".write(
            toFile: sandbox.folder + "/config/jobs.d/empty.yaml", atomically: true, encoding: .utf8)
        let withError = try await sandbox.jobctl(["definitions"])
        #expect(withError.status == 0, "\(withError)")
        #expect(withError.outLines.count == 4, "the valid ones are still listed")
        #expect(
            withError.errLines == [
                "jobctl: 1 error in \(sandbox.folder)/config/jobs.d: some definitions were not loaded (jobctl validate lists them)"
            ])
    }
}
