import Foundation
import JobStore
import JobStoreSQLite
import Testing

/// `jobctl logs`, against an engine running in the test process.
@Suite struct LogsTests {
    static let noisy = """
        pipeline:
          - then: work
            shell: |
              echo "first" >&2
              printf '\\033[31mred\\033[0m \\377\\n' >&2
              echo "value"
              printf 'last' >&2
        """

    @Test func logsPrintEveryLineInOrderWithItsTimeAndBytesAsWritten() async throws {
        let sandbox = try Sandbox(definitions: ["noisy": Self.noisy])
        let daemon = try TestDaemon(sandbox)
        let submitted = try await sandbox.jobctl(["submit", "noisy", "--wait", "--timeout", "60s"])
        await daemon.stop()
        #expect(submitted.status == 0, "\(submitted)")

        let result = try await sandbox.jobctl(["logs", "1"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 3, "\(result)")
        let expected: [[UInt8]] = [
            Array("first".utf8), Array("\u{1B}[31mred\u{1B}[0m ".utf8) + [0xFF], Array("last".utf8),
        ]
        for (line, text) in zip(lines, expected) {
            // `2026-11-21T05:54:03.127Z work#1 …`, the line's bytes untouched off a terminal.
            let prefix = Array(line.prefix(32))
            #expect(String(decoding: prefix.prefix(24), as: UTF8.self).hasSuffix("Z"), "\(result)")
            #expect(String(decoding: prefix.suffix(8), as: UTF8.self) == " work#1 ")
            #expect(Array(line.dropFirst(32)) == text)
        }

        let json = try await sandbox.jobctl(["logs", "1", "--stage", "work", "--json"])
        #expect(json.status == 0, "\(json)")
        let objects = try json.outLines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["seq"] as? Int } == [0, 1, 2])
        #expect(objects.map { $0["stage"] as? String } == ["work", "work", "work"])
        #expect(objects.map { $0["stream"] as? String } == ["stderr", "stderr", "stderr"])
        #expect(objects[0]["line"] as? String == "first")
        let binary = try #require(objects[1]["line"] as? [String: Any])
        #expect(binary["base64"] as? String == Data(expected[1]).base64EncodedString())

        let unknown = try await sandbox.jobctl(["logs", "1", "--stage", "nosuch"])
        #expect(unknown.status == 64, "\(unknown)")
    }

    @Test func stdoutKeptInTheLogIsMarkedAndJSONNamesEachLinesStream() async throws {
        let sandbox = try Sandbox(definitions: [
            "taps": """
            pipeline:
              - then: make
                shell: echo value
              - tap: look
                shell: echo "seen $(cat)"
            """
        ])
        let daemon = try TestDaemon(sandbox)
        let submitted = try await sandbox.jobctl(["submit", "taps", "--wait", "--timeout", "60s"])
        await daemon.stop()
        #expect(submitted.status == 0, "\(submitted)")

        let text = try await sandbox.jobctl(["logs", "1"])
        #expect(text.status == 0, "\(text)")
        #expect(text.outLines.count == 1, "\(text)")
        #expect(text.outLines.first?.hasSuffix("Z look#1 (stdout) seen value") == true, "\(text)")

        let json = try await sandbox.jobctl(["logs", "1", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data((json.outLines.first ?? "").utf8)) as? [String: Any])
        #expect(object["stream"] as? String == "stdout")
        #expect(object["line"] as? String == "seen value")
    }

    @Test func onATerminalEscapesAndOtherBytesAreShownEscaped() async throws {
        let sandbox = try Sandbox(definitions: ["noisy": Self.noisy])
        let daemon = try TestDaemon(sandbox)
        let submitted = try await sandbox.jobctl(["submit", "noisy", "--wait", "--timeout", "60s"])
        await daemon.stop()
        #expect(submitted.status == 0, "\(submitted)")
        let command = "stty cols 80 rows 40; '\(jobctlPath)' logs 1 --config '\(sandbox.configPath)'"
        let result = try await runChild("/usr/bin/script", ["-qec", command, "/dev/null"], directory: sandbox.folder)
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains(#"work#1 \u{1b}[31mred\u{1b}[0m \xFF"#), "\(result)")
        #expect(!result.out.contains("\u{1B}[31m"), "\(result)")
    }

    @Test func followPrintsLinesWhileTheStageRunsAndExitsAsWaitDoes() async throws {
        let sandbox = try Sandbox()
        let output = sandbox.file("follow.out")
        try Data().write(to: URL(fileURLWithPath: output))
        // The stage goes on only once the follower has printed its first line.
        let yaml = """
            pipeline:
              - then: work
                shell: |
                  echo "tick 1" >&2
                  i=0
                  while ! grep -q "tick 1" '\(output)'; do
                    i=$((i+1)); [ $i -lt 600 ] || exit 9
                    sleep 0.05
                  done
                  echo "tick 2" >&2
                  exit 3
            """
        try yaml.write(toFile: sandbox.folder + "/config/jobs.d/ticker.yaml", atomically: true, encoding: .utf8)
        let submitted = try await sandbox.jobctl(["submit", "ticker"])
        #expect(submitted.status == 0, "\(submitted)")
        let daemon = try TestDaemon(sandbox, pollInterval: .milliseconds(100))
        let command = "'\(jobctlPath)' logs 1 --follow --config '\(sandbox.configPath)' > '\(output)'"
        let result = try await runChild("/bin/sh", ["-c", command], directory: sandbox.folder)
        await daemon.stop()
        #expect(result.status == 1, "rejected: exit 1, as wait: \(result)")
        #expect(result.stderr.hasPrefix("jobctl: error: job 1 rejected at stage 1/1 work (then): "), "\(result)")
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(
            printed.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 2).last.map(String.init) }
                == ["tick 1", "tick 2"], "\(printed)")
    }

    /// While the store's log writes wait, the database has none of the
    /// lines: the follower gets them from the engine, through the socket.
    /// Once they may be written, the follower goes on from the database
    /// without printing a line twice or missing one.
    @Test func followOnTheHostThatRunsTheJobGetsLinesBeforeTheDatabaseHasThem() async throws {
        let sandbox = try Sandbox()
        let output = sandbox.file("follow.out")
        try Data().write(to: URL(fileURLWithPath: output))
        let yaml = """
            pipeline:
              - then: work
                shell: |
                  i=1
                  while [ $i -le 40 ]; do echo "line $i" >&2; i=$((i+1)); done
                  i=0
                  while ! grep -q "line 40" '\(output)'; do
                    i=$((i+1)); [ $i -lt 200 ] || exit 9
                    sleep 0.05
                  done
                  sleep 0.3
                  echo "after" >&2
              - then: next
                shell: echo "second stage" >&2; exit 3
            """
        try yaml.write(toFile: sandbox.folder + "/config/jobs.d/ticker.yaml", atomically: true, encoding: .utf8)
        let submitted = try await sandbox.jobctl(["submit", "ticker"])
        #expect(submitted.status == 0, "\(submitted)")
        let daemon = try TestDaemon(sandbox, pollInterval: .milliseconds(100), holdingLogs: true)
        let held = try #require(daemon.heldLogs)
        // The writes wait until the follower has printed the lines.
        let releaser = Task {
            for _ in 0..<300 {
                let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if printed.contains("line 40") { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            held.release()
        }
        let command = "'\(jobctlPath)' logs 1 --follow --config '\(sandbox.configPath)' > '\(output)'"
        let result = try await runChild("/bin/sh", ["-c", command], directory: sandbox.folder)
        releaser.cancel()
        held.release()
        await daemon.stop()
        #expect(result.status == 1, "rejected: exit 1, as wait: \(result)")
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(
            printed.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 2).last.map(String.init) }
                == (1...40).map { "line \($0)" } + ["after", "second stage"], "\(printed)")
    }
}
