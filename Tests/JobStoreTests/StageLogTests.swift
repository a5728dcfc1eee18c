import Foundation
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct StageLogTests {
    private func write(_ store: any StoreUnderTest, _ batch: StageLogBatch) async throws {
        let logs = try #require(store as? any StageLogStore)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            logs.writeStageLog(batch) { continuation.resume(with: $0) }
        }
    }

    private func read(_ store: any StoreUnderTest, _ query: StageLogQuery) async throws -> [StageLogEntry] {
        try await #require(store as? any StageLogStore).stageLog(query)
    }

    private func lines(_ texts: [[UInt8]], from first: Int = 0, at time: Date) -> [StageLogLine] {
        texts.enumerated().map { StageLogLine(sequence: first + $0.offset, at: time, bytes: $0.element) }
    }

    @Test(arguments: StoreKind.allCases)
    func linesComeBackInOrderWithTheirBytesAndTimes(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let time = Date(timeIntervalSince1970: 1_800_000_000.125)
        let key = StageLogKey(jobID: id, jobAttempt: 1, position: 1, attempt: 1)
        // Plain text, terminal escapes, bytes that are not UTF-8, a NUL, an empty line.
        let texts: [[UInt8]] = [
            Array("starting".utf8), Array("\u{1B}[31mred\u{1B}[0m".utf8), [0x66, 0xFF, 0xFE, 0x6F], [0x61, 0x00, 0x62],
            [],
        ]
        try await write(store, StageLogBatch(key: key, replacesEarlierRun: true, lines: lines(texts, at: time)))
        try await write(store, StageLogBatch(key: key, lines: lines([Array("more".utf8)], from: 5, at: time + 1)))
        // Another attempt and another stage sort after and before it.
        try await write(
            store,
            StageLogBatch(
                key: StageLogKey(jobID: id, jobAttempt: 1, position: 1, attempt: 2),
                lines: lines([Array("retry".utf8)], at: time)))
        try await write(
            store,
            StageLogBatch(
                key: StageLogKey(jobID: id, jobAttempt: 1, position: 0, attempt: 1),
                lines: lines([Array("first".utf8)], at: time)))

        let all = try await read(store, StageLogQuery(jobID: id))
        #expect(
            all.map(\.content)
                == ([Array("first".utf8)] + texts + [Array("more".utf8), Array("retry".utf8)]).map { .line($0) })
        #expect(all.map(\.cursor.position) == [0, 1, 1, 1, 1, 1, 1, 1])
        #expect(all[1].at == time)
        #expect(all[6].at == time + 1)

        let stage = try await read(store, StageLogQuery(jobID: id, position: 1, attempt: 1))
        #expect(stage.count == 6)
        // A follower reads on from where it stopped.
        let after = try await read(store, StageLogQuery(jobID: id, after: all[2].cursor, limit: 2))
        #expect(after.map(\.cursor) == [all[3].cursor, all[4].cursor])
    }

    @Test(arguments: StoreKind.allCases)
    func eachLineKeepsItsStream(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let key = StageLogKey(jobID: id, jobAttempt: 1, position: 0, attempt: 1)
        try await write(
            store,
            StageLogBatch(
                key: key,
                lines: [
                    StageLogLine(sequence: 0, at: time, bytes: Array("said".utf8), stream: .stderr),
                    StageLogLine(sequence: 1, at: time, bytes: Array("printed".utf8), stream: .stdout),
                    StageLogLine(sequence: 2, at: time, bytes: [0xFF], stream: .stdout),
                ]))
        let all = try await read(store, StageLogQuery(jobID: id))
        #expect(all.map(\.stream) == [.stderr, .stdout, .stdout])
        #expect(all.map(\.content) == [.line(Array("said".utf8)), .line(Array("printed".utf8)), .line([0xFF])])
    }

    @Test(arguments: StoreKind.allCases)
    func droppedLinesAreDeletedAndCounted(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let key = StageLogKey(jobID: id, jobAttempt: 1, position: 0, attempt: 1)
        try await write(
            store, StageLogBatch(key: key, lines: lines((0..<6).map { Array("line \($0)".utf8) }, at: time)))
        // Lines 2…3 fell out of the tail; then 4 too.
        try await write(
            store,
            StageLogBatch(
                key: key, deleting: 2...3, lines: lines([Array("line 6".utf8)], from: 6, at: time),
                dropped: StageLogDrop(sequence: 2, lines: 2, bytes: 12, at: time)))
        try await write(
            store,
            StageLogBatch(
                key: key, deleting: 4...4, dropped: StageLogDrop(sequence: 2, lines: 3, bytes: 18, at: time)))
        let entries = try await read(store, StageLogQuery(jobID: id))
        #expect(entries.map(\.cursor.sequence) == [0, 1, 2, 5, 6])
        #expect(entries[2].content == .dropped(lines: 3, bytes: 18))

        // A run of the same attempt after a crash starts it afresh.
        try await write(
            store, StageLogBatch(key: key, replacesEarlierRun: true, lines: lines([Array("again".utf8)], at: time)))
        #expect(try await read(store, StageLogQuery(jobID: id)).map(\.content) == [.line(Array("again".utf8))])
    }

    @Test(arguments: StoreKind.allCases)
    func logsGoWithTheirJob(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job(stages: [StagePlan(name: "a", kind: "then")])).id
        let lease = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first
        ).lease
        let key = StageLogKey(jobID: id, jobAttempt: 1, position: 0, attempt: 1)
        try await write(store, StageLogBatch(key: key, lines: lines([Array("kept".utf8)], at: Date())))
        try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(nil)))
        #expect(try await store.prune(finishedBefore: Date().addingTimeInterval(60)) == 1)
        #expect(try await store.count("SELECT count(*) FROM stage_logs") == 0)
        // A batch for a job that is gone writes nothing, and is no error.
        try await write(store, StageLogBatch(key: key, lines: lines([Array("late".utf8)], at: Date())))
        #expect(try await store.count("SELECT count(*) FROM stage_logs") == 0)
    }

    /// What a statement costs besides its rows is paid per statement: a
    /// batch's lines go in INSERTs of up to 32 rows, and the rest in at most
    /// five more (16, 8, 4, 2, 1), not in one statement a line.
    @Test func aBatchOfLinesIsWrittenInFewStatements() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let id = try await store.submit(job()).id
        let key = StageLogKey(jobID: id, jobAttempt: 1, position: 0, attempt: 1)
        var first = 0
        for (count, inserts) in [(100, 4), (31, 5), (64, 2)] {
            let texts = (0..<count).map { Array("line \(first + $0)".utf8) }
            let batch = StageLogBatch(key: key, lines: lines(texts, from: first, at: Date()))
            let statements = try await store.writerStatements { try await write(store, batch) }
            #expect(
                statements.filter { $0.hasPrefix("INSERT INTO stage_logs") }.count == inserts,
                "a batch of \(count) lines")
            first += count
        }
        let kept = try await read(store, StageLogQuery(jobID: id, limit: 1000))
        #expect(kept.map(\.cursor.sequence) == Array(0..<first))
        #expect(kept.last?.content == .line(Array("line \(first - 1)".utf8)))
    }
}
