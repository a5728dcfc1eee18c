import Foundation
import TestSupport
import Testing

@testable import JobCalendar

/// Any text, however mangled, parses or throws a ScheduleParseError whose
/// column lies within it: never a crash.
@Suite struct ParserRobustnessTests {
    static let alphabets: [(ScheduleKind, [String])] = [
        (
            .cron,
            [
                "*", "/", "-", ",", " ", "\t", "0", "1", "5", "7", "12", "31", "59", "60", "mon", "SUN", "jan", "L",
                "W", "#", "?", "@", "@daily", "x", "é",
            ]
        ),
        (
            .calendar,
            [
                "*", "/", "-", "~", ",", ".", "..", ":", " ", "0", "1", "5", "12", "29", "2024", "Mon", "fri",
                "daily", "UTC", "Europe/Berlin", "Nowhere/Land", "@", "0.5", "é", "9999999999",
            ]
        ),
        (.every, ["1", "0", "15", "m", "s", "h", "d", "ms", " ", ".", "-", "x", "99999999999999999999"]),
    ]

    @Test(arguments: alphabets)
    func mangledTextNeverCrashes(_ kind: ScheduleKind, _ alphabet: [String]) {
        var random = SeededGenerator(seed: 7)
        var parsed = 0
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...9, using: &random)).map { _ in random.pick(alphabet) }.joined()
            do {
                _ = try ScheduleExpression.parse(kind: kind, text: text)
                parsed += 1
            } catch {
                #expect(error.column >= 0 && error.column <= text.unicodeScalars.count, "\(text): \(error)")
                #expect(!error.reason.isEmpty && !error.field.isEmpty)
            }
        }
        #expect(parsed > 0, "some of the random texts are valid")
    }
}
