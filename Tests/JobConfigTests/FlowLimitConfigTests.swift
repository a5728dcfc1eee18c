import Foundation
import JobConfig
import Testing

/// `limit:` in a definition.
@Suite struct FlowLimitConfigTests {
    static let pipeline = "pipeline:\n  - then: a\n    run: [x]\n"

    @Test func aLimitIsReadWithItsKey() throws {
        let d = try #require(
            checkDefinition(
                Self.pipeline + "limit: { global: 3, key: {json: .customer}, per-key: 1, order: fair }\n"
            ).value)
        let limit = try #require(d.limit)
        #expect(limit.global == 3 && limit.perKey == 1 && limit.order == .fair)
        #expect(limit.key?.description == "{json: .customer}")
        let byKey = try #require(checkDefinition(Self.pipeline + "limit: { per-key: 1, key: key }\n").value)
        #expect(byKey.limit == FlowLimit(perKey: 1, key: .key))
    }

    @Test func aLimitWithoutWhatItNeedsIsRefused() {
        expectDiagnostic(
            checkDefinition(Self.pipeline + "limit: { per-key: 1 }\n").diagnostics, .missingKey, line: 4,
            contains: "add key: input")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "limit: { key: input }\n").diagnostics, .invalidValue, line: 4,
            contains: "needs 'global', 'per-key' or both")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "limit: { global: 0 }\n").diagnostics, .invalidValue, line: 4)
        expectDiagnostic(
            checkDefinition(Self.pipeline + "limit: { global: 1, order: random }\n").diagnostics, .invalidValue,
            line: 4, contains: "fifo or fair")
        expectDiagnostic(
            checkDefinition(Self.pipeline + "limit: { global: 1, kye: input }\n").diagnostics, .unknownKey, line: 4)
    }

    @Test func aPoolMayHaveALimitAcrossHosts() throws {
        let config = try DaemonConfiguration.parse(
            yaml: "pools: { default: 8, reports: { size: 4, limit: { global: 2 } } }\n", path: "/etc/jobd/jobd.yaml"
        ).get()
        #expect(config.pools == ["default": 8, "reports": 4])
        #expect(config.poolLimits == ["reports": 2])
        #expect(config.definitionContext.limitedPools == ["reports"])
        let bad = DaemonConfiguration.parse(
            yaml: "pools:\n  reports: { size: 4, limit: { per-key: 2 } }\n", path: "/etc/jobd/jobd.yaml")
        expectDiagnostic(bad.diagnostics, .unknownKey, line: 2, contains: "per-key")
    }
}
