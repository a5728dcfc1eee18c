import Foundation
import JobConfig
import Testing

/// `unique:` in a definition.
@Suite struct UniqueConfigTests {
    static let pipeline = "pipeline:\n  - then: a\n    run: [x]\n"

    @Test func uniqueIsReadWithItsDefaults() throws {
        let full = try #require(
            checkDefinition(
                Self.pipeline
                    + "unique: { key: {json: .order}, while: [pending], period: 1h, on-conflict: replace-input }\n"
            ).value)
        #expect(
            full.unique
                == Uniqueness(
                    key: .json(try JSONPath(parsing: ".order")), whileRunning: false, period: .seconds(3600),
                    onConflict: .replaceInput))
        let plain = try #require(checkDefinition(Self.pipeline + "unique: { key: input }\n").value)
        #expect(plain.unique == Uniqueness(key: .input, whileRunning: true, period: nil, onConflict: .skip))
        let both = try #require(
            checkDefinition(
                Self.pipeline + "unique: { key: key, while: [running, pending], on-conflict: reschedule }\n"
            )
            .value)
        #expect(both.unique == Uniqueness(key: .key, whileRunning: true, onConflict: .reschedule))
    }

    @Test func aBadUniqueIsRefusedWhereItIs() {
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique: { period: 1h }\n").diagnostics, .missingKey, line: 4,
            contains: "needs a 'key'")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique:\n  key: input\n  while: [running]\n").diagnostics,
            .invalidValue, line: 6, column: 10, contains: "must include pending")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique:\n  key: input\n  while: [pending, fulfilled]\n").diagnostics,
            .invalidValue, line: 6, column: 20, contains: "use 'period'")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique: { key: input, on-conflict: replace }\n").diagnostics,
            .invalidValue, line: 4, contains: "skip, replace-input, reschedule")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique: { key: input, period: 0s }\n").diagnostics, .badDuration,
            line: 4)
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique: { key: inputs }\n").diagnostics, .invalidValue, line: 4,
            contains: "use input, key")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "unique: { key: input, perod: 1h }\n").diagnostics, .unknownKey, line: 4,
            contains: "did you mean 'period'")
    }
}
