import Foundation
import JobConfig
import Testing

/// `rate:` and `rate-key:` in a definition.
@Suite struct RateConfigTests {
    static let pipeline = "pipeline:\n  - then: a\n    run: [x]\n"

    @Test func aRateIsReadWithItsKey() throws {
        let d = try #require(checkDefinition(Self.pipeline + "rate: 60/1m\n").value)
        #expect(d.rate == FlowRate(count: 60, window: .seconds(60)))
        let keyed = try #require(
            checkDefinition(Self.pipeline + "rate: 10/1s\nrate-key: {json: .customer}\n").value)
        #expect(keyed.rate?.key?.description == "{json: .customer}")
        let both = try #require(
            checkDefinition(
                Self.pipeline + "limit: { key: input, per-key: 1 }\nrate: 5/1h\nrate-key: input\n"
            ).value)
        #expect(both.rate == FlowRate(count: 5, window: .seconds(3600), key: .input))
    }

    @Test func aBadRateIsRefusedWhereItIsWritten() {
        for (text, code, words) in [
            ("60", .invalidValue, "not N/WINDOW"), ("0/1s", .invalidValue, "between 1 and"),
            ("ten/1s", .invalidValue, "between 1 and"), ("10/soon", .badDuration, "the window"),
            ("10/1ms", .invalidValue, "between 100ms and 1d"), ("10/2d", .invalidValue, "between 100ms and 1d"),
        ] as [(String, JobConfig.Diagnostic.Code, String)] {
            expectDiagnostic(
                checkDefinition(Self.pipeline + "rate: \(text)\n").diagnostics, code, line: 4, column: 7,
                contains: words)
        }
        expectDiagnostic(
            checkDefinition(Self.pipeline + "rate-key: input\n").diagnostics, .missingKey, line: 4,
            contains: "needs a 'rate'")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "rate: 1/1s\nrate-key: nope\n").diagnostics, .invalidValue, line: 5)
        expectDiagnostic(
            checkDefinition(
                Self.pipeline + "limit: { key: input, per-key: 1 }\nrate: 1/1s\nrate-key: key\n"
            ).diagnostics, .invalidValue, line: 6, contains: "a job has one key")
    }
}
