import Foundation
import JobConfig
import JobConfigStore
import JobStore
import Testing

/// The limit key each job gets, at submit, from its definition's `limit:`.
@Suite struct LimitKeyTests {
    func definition(_ limit: String) throws -> JobDefinition {
        let context = DefinitionContext(queues: ["map", "return"], pools: ["default"])
        let yaml = "pipeline:\n  - then: a\n    run: [x]\n" + limit
        return try #require(DefinitionLoader(context: context).parse(yaml: yaml, path: "/defs/d.yaml").value)
    }

    @Test func theKeyComesFromAJSONPathTheInputOrTheJobsKey() throws {
        let json = try definition("limit: { per-key: 1, key: {json: .customer} }\n")
        #expect(json.newJob(input: Data(#"{"customer": "acme", "n": 1}"#.utf8)).limitKey == "acme")
        #expect(json.newJob(input: Data(#"{"customer": {"id": 7}}"#.utf8)).limitKey == #"{"id":7}"#)
        #expect(json.newJob(input: Data("not json".utf8)).limitKey == "", "no value at the path: the shared key")
        let input = try definition("limit: { per-key: 2, key: input }\n")
        #expect(input.newJob(input: Data("x-1".utf8)).limitKey == "x-1")
        let key = try definition("limit: { per-key: 1, key: key }\n")
        #expect(key.newJob(input: Data("x".utf8), idempotencyKey: "k-9").limitKey == "k-9")
        #expect(try definition("limit: { global: 2 }\n").newJob().limitKey == "")
        #expect(try definition("").newJob().limitKey == nil, "no limit: no key")
        #expect(
            try definition("limit: { global: 2, per-key: 1, key: input, order: fair }\n").concurrencyLimit
                == .init(global: 2, perKey: 1, order: .fair))
    }

    /// `rate-key:` gives the key as `limit`'s `key` does; a rate without
    /// one counts every job of the definition together.
    @Test func aRateKeyIsTheJobsKey() throws {
        let keyed = try definition("rate: 10/1s\nrate-key: {json: .customer}\n")
        #expect(keyed.newJob(input: Data(#"{"customer": "c7"}"#.utf8)).limitKey == "c7")
        #expect(keyed.startRate == StartRate(count: 10, window: .seconds(1), perKey: true))
        let whole = try definition("rate: 60/1m\n")
        #expect(whole.newJob(input: Data("x".utf8)).limitKey == nil, "one rate for the definition: no key")
        #expect(whole.startRate == StartRate(count: 60, window: .seconds(60)))
        let both = try definition("limit: { per-key: 1, key: input }\nrate: 5/1h\n")
        #expect(both.newJob(input: Data("k".utf8)).limitKey == "k")
        #expect(both.startRate?.perKey == false, "limit's key alone does not make the rate per key")
    }
}
