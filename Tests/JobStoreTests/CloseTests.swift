import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import JobValues
import Testing

/// Closing a store leaves no `-wal`/`-shm` behind unless another
/// connection still uses the database.
@Suite struct CloseTests {
    private func companions(_ path: String) -> [String] {
        ["-wal", "-shm"].filter { FileManager.default.fileExists(atPath: path + $0) }
    }

    /// Stores closed while reads are in flight, more at once than the
    /// cooperative pool has threads: every close returns. (GRDB's close
    /// waits for readers, which an async read gives back from that pool.)
    @Test(.timeLimit(.minutes(5)))
    func closingManyStoresWithReadsInFlightNeverHangs() async throws {
        for _ in 0..<20 {
            let stores = try (0..<6).map { _ in try makeStore() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (store, _) in stores {
                    for _ in 0..<8 { group.addTask { _ = try? await store.list(.pending()) } }
                    group.addTask { try await store.close() }
                }
                try await group.waitForAll()
            }
            withExtendedLifetime(stores) {}
        }
    }

    @Test func closingAfterReadsRemovesTheWALFiles() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let writer = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        let id = try await writer.submit(job(input: "kept")).id
        try await writer.close()

        // A store that only reads: its reader connection is the last GRDB closes.
        let reader = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        #expect(try await reader.job(id) != nil)
        _ = try await reader.list(.pending())
        #expect(companions(path) == ["-wal", "-shm"])
        try await reader.close()
        #expect(companions(path).isEmpty)

        let again = try SQLiteJobStore(path: path)
        #expect(try await again.job(id)?.job.input == Data("kept".utf8))
        try await again.close()
    }

    @Test func closingWhileAnotherStoreIsOpenKeepsItsWrites() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let longLived = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        let first = try await longLived.submit(job(input: "one")).id

        let shortLived = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        #expect(try await shortLived.job(first) != nil)
        try await shortLived.close()
        // The other store still has the database open: its WAL stays.
        #expect(companions(path).contains("-wal"))

        let second = try await longLived.submit(job(input: "two")).id
        #expect(try await longLived.job(second)?.job.input == Data("two".utf8))
        try await longLived.close()
        #expect(companions(path).isEmpty)
    }

    private func walSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int
    }

    @Test func aSingleConnectionStoreWritesNothingToOpen() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let writer = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        let id = try await writer.submit(job(input: "kept")).id
        try await writer.close()
        #expect(companions(path).isEmpty)

        // A pool writes a transaction to make a WAL file when there is none…
        let pool = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        #expect((walSize(path) ?? 0) > 0)
        try await pool.close()

        // …one connection does not, reads and writes, and cleans up when it closes.
        let single = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil, connections: .single))
        #expect(try await single.job(id)?.job.input == Data("kept".utf8))
        #expect((walSize(path) ?? 0) == 0)
        let second = try await single.submit(job(input: "two")).id
        #expect(try await single.list(.pending()).jobs.map(\.id) == [second, id])
        #expect(try await single.writerPragma("journal_mode") == "wal")
        try await single.close()
        #expect(companions(path).isEmpty)
    }

    @Test func aSingleConnectionStoreCreatesAWALDatabase() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("new.sqlite")
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil, connections: .single))
        _ = try await store.submit(job())
        #expect(try await store.writerPragma("journal_mode") == "wal")
        try await store.close()
        let again = try SQLiteJobStore(path: path)
        #expect(try await again.list(.pending()).jobs.count == 1)
        try await again.close()
    }
}
