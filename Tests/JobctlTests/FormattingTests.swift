import Foundation
import JobConfig
import Testing

@testable import jobctl

/// The pieces of jobctl's output that do not need a process.
@Suite struct FormattingTests {
    @Test(
        arguments: [
            (0, "0ms"), (999, "999ms"), (1_000, "1s"), (1_049, "1s"), (1_050, "1.1s"), (59_940, "59.9s"),
            (60_000, "1m00s"), (187_000, "3m07s"), (3_600_000, "1h00m"), (7_500_000, "2h05m"), (90_000_000, "1d1h"),
        ] as [(Int64, String)])
    func durationsReadShort(_ milliseconds: Int64, _ text: String) {
        #expect(Formatting.duration(milliseconds: milliseconds) == text)
    }

    @Test func timestampsAreTheDatabasesFormat() {
        #expect(Formatting.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Formatting.timestamp(Date(timeIntervalSince1970: 1_795_251_430.127)) == "2026-11-21T08:57:10.127Z")
        #expect(Formatting.timestamp(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func oneLineEscapesControlCharacters() {
        #expect(Formatting.oneLine("a\nb\tc\r\nd\u{1B}[31m") == "a\\nb\\tc\\nd\\u{1b}[31m")
        #expect(Formatting.oneLine("naïve ✓") == "naïve ✓")
    }

    @Test func oneLineCutsToTheLimitWithAnEllipsis() {
        #expect(Formatting.oneLine("abcdef", limit: 6) == "abcdef")
        #expect(Formatting.oneLine("abcdefg", limit: 6) == "abcde…")
        // An escape is never cut in half.
        #expect(Formatting.oneLine("abcd\nef", limit: 6) == "abcd…")
        #expect(Formatting.oneLine("abc\nef", limit: 6) == "abc\\n…")
        #expect(Formatting.oneLine(String(repeating: "é", count: 100), limit: 10).count == 10)
    }

    @Test func valuesInJSONKeepEveryByte() {
        #expect(Formatting.valueJSON(nil) == .null)
        #expect(Formatting.valueJSON(Data("text\n".utf8)) == .string("text\n"))
        #expect(Formatting.valueJSON(Data([0xC3, 0x28])) == .fields([("base64", .string("wyg="))]))
    }

    @Test func jsonIsIndentedInOrderWithEscapes() {
        let document = JSON.fields([
            ("b", .int(-3)), ("a", .array([.bool(true), .null])), ("s", .string("q\"\\\u{01}\n")), ("e", .object([])),
        ])
        #expect(
            document.pretty == """
                {
                  "b": -3,
                  "a": [
                    true,
                    null
                  ],
                  "s": "q\\"\\\\\\u0001\\n",
                  "e": {}
                }

                """)
        // What JSONSerialization reads back is what was written.
        let parsed = try? JSONSerialization.jsonObject(with: Data(document.pretty.utf8)) as? [String: Any]
        #expect(parsed?["s"] as? String == "q\"\\\u{01}\n")
    }

    @Test func tableColumnsAlignWhateverTheColour() {
        var table = Table(["ID", "NAME", "NOTE"], alignments: [.right, .left, .left])
        table.add([Table.Cell("7"), Table.Cell("short", .green), Table.Cell("")])
        table.add([Table.Cell("1234"), Table.Cell("a longer name"), Table.Cell("x")])
        let plain = Console(stdoutIsTerminal: false, stderrIsTerminal: false, useColor: false)
        #expect(
            table.render(plain) == """
                  ID  NAME           NOTE
                   7  short
                1234  a longer name  x

                """)
        let coloured = Console(stdoutIsTerminal: true, stderrIsTerminal: true, useColor: true, width: 80)
        let lines = table.render(coloured).split(separator: "\n").map(String.init)
        let stripped = lines.map {
            $0.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        }
        #expect(stripped == table.render(plain).split(separator: "\n").map(String.init))
        #expect(lines[1].contains("\u{1B}[32mshort\u{1B}[0m"))
    }

    @Test func everyExitStatusIsDocumentedInTheHelp() {
        let help = ExitStatus.helpTable
        for status in ExitStatus.all {
            #expect(help.contains("\n  \(status.code) "), "\(status) missing from the help")
        }
        #expect(Set(ExitStatus.all.map(\.code)).count == ExitStatus.all.count)
    }
}
