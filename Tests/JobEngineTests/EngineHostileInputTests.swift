import Foundation
import JobStore
import JobStoreSQLite
import JobValues
import Testing

@testable import JobEngine

/// Job input is data: it reaches a process on stdin only.
@Suite struct EngineHostileInputTests {
    static let inputs = [
        "$(touch /tmp/jobd-hostile-PLACEHOLDER)",
        "`touch /tmp/jobd-hostile-PLACEHOLDER`",
        "; rm -rf /tmp/jobd-hostile-PLACEHOLDER; echo pwned",
        "' \" \\ $HOME ${PATH} && touch /tmp/jobd-hostile-PLACEHOLDER || true\n",
    ]

    @Test(arguments: inputs)
    func shellMetacharactersStayData(_ template: String) async throws {
        let tag = UUID().uuidString
        let marker = "/tmp/jobd-hostile-\(tag)"
        let input = template.replacingOccurrences(of: "PLACEHOLDER", with: tag)
        let harness = try EngineHarness([
            """
            name: echo-back
            pipeline:
              - then: argv
                run: [cat]
              - then: script
                shell: "cat"
              - map: same
                transform: trim
              - when: both
                all:
                  - run: [cat]
                  - shell: cat
            """
        ])
        let detail = try await harness.resolved(try await harness.submit("echo-back", input: input))
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.stage("argv")?.text == input)
        #expect(detail.stage("script")?.text == input)
        #expect(!FileManager.default.fileExists(atPath: marker), "the input was run as a command")
        await harness.stop()
    }

    @Test func nulBytesAndBinaryPassUnchanged() async throws {
        let harness = try EngineHarness([
            """
            name: binary
            pipeline:
              - then: copy
                run: [cat]
              - then: again
                shell: cat
            """
        ])
        let input: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 0, 10, 0x24, 0x28, 0]
        let detail = try await harness.resolved(try await harness.submit("binary", input: input))
        #expect(detail.job.state == .fulfilled)
        #expect(detail.job.result.map(Array.init) == input)
        #expect(detail.stage("copy")?.value.map(Array.init) == input)
        await harness.stop()
    }

    @Test func tenMegabytesWithARaisedCap() async throws {
        let harness = try EngineHarness(
            [
                """
                name: big
                pipeline:
                  - then: copy
                    run: [cat]
                  - then: count
                    shell: "wc -c"
                """,
                """
                name: bigger
                pipeline:
                  - then: double
                    shell: "cat; cat /dev/zero | head -c 7000000"
                """,
            ], valueCap: 16 << 20)
        var input = [UInt8](repeating: 0, count: 10 << 20)
        for index in input.indices { input[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) }
        let detail = try await harness.resolved(try await harness.submit("big", input: input), within: .seconds(60))
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.stage("copy")?.value.map(Array.init) == input)
        #expect(detail.resultText?.trimmingCharacters(in: .whitespaces) == "\(10 << 20)\n")

        // Over the cap: rejected with a clear error, never cut.
        let over = try await harness.resolved(try await harness.submit("bigger", input: input), within: .seconds(60))
        #expect(over.job.state == .rejected)
        #expect(
            over.stage("double")?.error?.contains("output-limit") == true || over.job.error?.contains("limit") == true,
            "\(over.job.error ?? "")")
        #expect(over.stage("double")?.value == nil)
        await harness.stop()
    }
}
