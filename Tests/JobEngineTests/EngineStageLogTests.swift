import Foundation
import JobProcesses
import JobStore
import JobStoreSQLite
import Synchronization
import TestSupport
import Testing

@testable import JobEngine

/// Stage logs through real processes and a real SQLite file.
@Suite struct EngineStageLogTests {
    private func entries(_ harness: EngineHarness, _ id: Int64) async throws -> [StageLogEntry] {
        try await harness.store.stageLog(StageLogQuery(jobID: id, limit: 10_000))
    }

    private func text(_ entry: StageLogEntry) -> String? {
        if case let .line(bytes) = entry.content { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    @Test func everyLineOfEveryAttemptIsKeptInOrderWithItsTime() async throws {
        let harness = try EngineHarness([
            """
            name: chatty
            pipeline:
              - then: work
                shell: |
                  i=0
                  while [ $i -lt 300 ]; do echo "line $i" >&2; i=$((i+1)); done
                  printf 'no newline' >&2
                  echo value
                  [ "$JOBD_ATTEMPT" = 2 ]
                retry: { attempts: 2, backoff: 0s }
              - then: quiet
                run: [cat]
            """
        ])
        let before = Date().addingTimeInterval(-1)
        let id = try await harness.submit("chatty")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        let after = Date().addingTimeInterval(1)
        let all = try await entries(harness, id)
        let expected = (0..<300).map { "line \($0)" } + ["no newline"]
        #expect(all.count == 2 * expected.count, "two attempts of the first stage; nothing from the quiet one")
        for attempt in 1...2 {
            let lines = all.filter { $0.cursor.attempt == attempt }
            #expect(lines.map(text) == expected)
            #expect(lines.map(\.cursor.sequence) == Array(0..<expected.count))
            #expect(lines.allSatisfy { $0.cursor.position == 0 && $0.cursor.jobAttempt == 1 })
            #expect(lines.allSatisfy { $0.at >= before && $0.at <= after })
            #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.at <= $1.at })
        }
    }

    /// A stage whose stdout does not become the chain's value (`tap`,
    /// `finally`) keeps it in its log, marked; a `then` stage's stdout is its
    /// value and stays out of the log.
    @Test func stdoutThatIsNotTheValueIsKeptMarked() async throws {
        let harness = try EngineHarness([
            """
            name: taps
            pipeline:
              - then: make
                shell: echo value; echo "made" >&2
              - tap: look
                shell: echo "seen $(cat)"; echo "looked" >&2; printf 'no newline'
              - finally: tidy
                shell: echo "tidied"
            """
        ])
        let id = try await harness.submit("taps")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.job.result == Data("value\n".utf8), "tap and finally leave the value")
        let all = try await entries(harness, id)
        // Each stream in its order (the two pipes are read as their bytes come).
        func lines(_ position: Int, _ stream: StageLogStream) -> [String?] {
            all.filter { $0.cursor.position == position && $0.stream == stream }.map(text)
        }
        #expect(lines(0, .stderr) == ["made"])
        #expect(lines(0, .stdout) == [])
        #expect(lines(1, .stdout) == ["seen value", "no newline"])
        #expect(lines(1, .stderr) == ["looked"])
        #expect(lines(2, .stdout) == ["tidied"])
        #expect(all.count == 5)
    }

    /// `logs: { max: 0 }` keeps nothing in the store; the mirror (the
    /// journal, which has its own switch) still gets each line.
    @Test func maxZeroKeepsNothingButTheMirrorStillGetsTheLines() async throws {
        let mirrored = MirroredLines()
        let harness = try EngineHarness(
            [
                """
                name: quiet
                logs: { max: 0 }
                pipeline:
                  - then: talk
                    shell: echo "one" >&2; echo "two" >&2
                """
            ],
            configure: { $0.stageLogMirror = { _ in mirrored } })
        let id = try await harness.submit("quiet")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(try await entries(harness, id).isEmpty)
        #expect(mirrored.lines == ["one", "two"])
    }

    /// The loser of a race is stopped once the winner fulfils; what it
    /// writes while it stops, after the stage settled, is kept too.
    @Test func aStoppedRaceLosersLastLinesAreKept() async throws {
        let folder = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: racing
                pipeline:
                  - race: first
                    any:
                      - shell: |
                          trap 'echo "loser stopping" >&2; exit 1' TERM
                          echo "loser up" >&2
                          touch '\(folder)/up'
                          sleep 30 & wait
                      - shell: |
                          while [ ! -e '\(folder)/up' ]; do sleep 0.02; done
                          echo won
                """
            ], folder: folder)
        let id = try await harness.submit("racing")
        let detail = try await harness.resolved(id)
        #expect(detail.resultText == "won\n")
        // Its last line comes after the stage's result: wait for it.
        var texts: [String?] = []
        for _ in 0..<50 {
            texts = try await entries(harness, id).map(text)
            if texts.contains("loser stopping") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // (The shell may also say `Terminated` for its stopped `sleep`.)
        #expect(texts.first == "loser up")
        #expect(texts.contains("loser stopping"), "\(texts)")
    }

    @Test func overTheCapTheHeadAndTailAreKeptAndTheRestCounted() async throws {
        let harness = try EngineHarness([
            """
            name: flood
            pipeline:
              - then: work
                shell: "i=1000; while [ $i -lt 3000 ]; do echo \\"line $i\\" >&2; i=$((i+1)); done"
                logs: { max: 4KiB }
            """
        ])
        let id = try await harness.submit("flood")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        let all = try await entries(harness, id)
        // Each line costs its 9 bytes and 32 more: 49 lines fit each half of 4 KiB.
        let lineCost = 9 + StageLog.lineOverhead
        let kept = 2048 / lineCost
        #expect(all.count == 2 * kept + 1)
        #expect(all.prefix(kept).map(text) == (1000..<(1000 + kept)).map { "line \($0)" })
        #expect(all.suffix(kept).map(text) == ((3000 - kept)..<3000).map { "line \($0)" })
        let dropped = 2000 - 2 * kept
        #expect(all[kept].content == .dropped(lines: dropped, bytes: dropped * 9))
        #expect(all[kept].cursor.sequence == kept)
        #expect(all.suffix(kept).first?.cursor.sequence == 2000 - kept)
    }

    @Test func bytesThatAreNotTextStayAsWritten() async throws {
        let harness = try EngineHarness([
            """
            name: binary
            pipeline:
              - then: work
                shell: "printf '\\\\377\\\\033[2J\\\\000x\\\\n' >&2"
            """
        ])
        let id = try await harness.submit("binary")
        #expect(try await harness.resolved(id).job.state == .fulfilled)
        let all = try await entries(harness, id)
        #expect(all.map(\.content) == [.line([0xFF, 0x1B, 0x5B, 0x32, 0x4A, 0x00, 0x78])])
    }
}

/// A mirror that keeps what it gets.
private final class MirroredLines: StageLogMirror {
    private let received = Mutex<[String]>([])
    var lines: [String] { received.withLock { $0 } }
    func receive(_ lines: [OutputLine]) {
        received.withLock { $0 += lines.map { String(decoding: $0.bytes, as: UTF8.self) } }
    }
    func close() {}
}
