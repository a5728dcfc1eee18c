import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct ValueTests {
    static let samples: [(String, Data)] = [
        ("plain text", Data("total: 42\n".utf8)),
        ("looks like a number", Data("007".utf8)),
        ("looks like a float", Data("1e3".utf8)),
        ("empty", Data()),
        ("accents and emoji", Data("café ☕️ 🧾\n".utf8)),
        ("invalid UTF-8", Data([0x66, 0x6f, 0xff, 0xfe, 0x80, 0x0a])),
        ("NUL inside text", Data("a\u{0}b".utf8)),
        ("all bytes", Data((0...255).map { UInt8($0) })),
        ("CRLF and tabs", Data("a\r\n\tb".utf8)),
    ]

    @Test(arguments: StoreKind.allCases)
    func valuesRoundTripByteForByte(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        for (label, bytes) in Self.samples {
            let id = try await store.submit(
                NewJob(definition: "v", input: bytes, stages: [StagePlan(name: "s", kind: "then")])
            ).id
            let claimed = try #require(
                try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
            #expect(claimed.job.input == bytes, "input: \(label)")
            try await store.recordStageResult(
                StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(bytes)))
            try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(bytes)))
            let detail = try #require(try await store.job(id))
            #expect(detail.job.input == bytes, "input: \(label)")
            #expect(detail.stages[0].value == bytes, "stage value: \(label)")
            #expect(detail.job.result == bytes, "result: \(label)")
        }
    }

    /// SQLite: TEXT or BLOB in one column; PostgreSQL: `input text` or `input_bytes bytea`.
    @Test(arguments: StoreKind.allCases)
    func textIsStoredAsTextAndOtherBytesAsBlob(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let text = try await store.submit(NewJob(definition: "v", input: Data("007".utf8), stages: [])).id
        let binary = try await store.submit(NewJob(definition: "v", input: Data([0xff, 0x00]), stages: [])).id
        let nul = try await store.submit(NewJob(definition: "v", input: Data("a\u{0}b".utf8), stages: [])).id
        let typeOf =
            kind == .sqlite
            ? "typeof(input)" : "CASE WHEN input_bytes IS NOT NULL THEN 'blob' WHEN input IS NOT NULL THEN 'text' END"
        #expect(try await store.scalar("SELECT \(typeOf) FROM jobs WHERE id = \(text)") == "text")
        #expect(try await store.scalar("SELECT input FROM jobs WHERE id = \(text)") == "007")
        #expect(try await store.scalar("SELECT \(typeOf) FROM jobs WHERE id = \(binary)") == "blob")
        #expect(try await store.scalar("SELECT \(typeOf) FROM jobs WHERE id = \(nul)") == "blob")
    }

    @Test(arguments: StoreKind.allCases)
    func valueOverTheCapIsRefusedNotCut(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind, maxValueBytes: 1000)
        _ = scope
        let atCap = Data(repeating: 120, count: 1000)
        let overCap = Data(repeating: 120, count: 1001)
        let id = try await store.submit(
            NewJob(definition: "v", input: atCap, stages: [StagePlan(name: "s", kind: "then")])
        ).id
        let error = await expectStoreError(.valueTooLarge) {
            try await store.submit(NewJob(definition: "v", input: overCap, stages: []))
        }
        #expect(error?.message.contains("1001 bytes") == true)
        #expect(error?.message.contains("1000") == true)
        // The config key to raise, and advice that fits an input (not a stage's output).
        #expect(error?.message.contains("store.value-cap") == true && error?.message.contains("maxValueBytes") == false)
        #expect(error?.message.contains("Give a smaller input") == true)
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        let stageError = await expectStoreError(.valueTooLarge) {
            try await store.recordStageResult(
                StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(overCap)))
        }
        #expect(stageError?.jobID == id)
        #expect(stageError?.message.contains("Make the stage print less") == true)
        #expect(stageError?.message.contains("store.value-cap") == true)
        await expectStoreError(.valueTooLarge) {
            try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(overCap)))
        }
        let detail = try #require(try await store.job(id))
        #expect(detail.stages[0].value == nil)
        #expect(detail.stages[0].state == .pending)
        #expect(detail.job.state == .running)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func defaultCapIsOneMebibyte(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let cap =
            (store as? SQLiteJobStore)?.configuration.maxValueBytes
            ?? (store as? PostgresJobStore)?.configuration.maxValueBytes
        #expect(cap == 1_048_576)
        let big = Data(repeating: 0xfe, count: 1_048_576)
        let id = try await store.submit(NewJob(definition: "v", input: big, stages: [])).id
        #expect(try await store.job(id)?.job.input == big)
        await expectStoreError(.valueTooLarge) {
            try await store.submit(NewJob(definition: "v", input: big + Data([1]), stages: []))
        }
    }
}
