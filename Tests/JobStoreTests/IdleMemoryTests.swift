import Foundation
import JobStore
import Testing

@testable import JobStoreSQLite

/// The memory a SQLite store's connections keep for reuse is handed back
/// when asked, and an integrity check at open leaves none behind.
@Suite struct IdleMemoryTests {
    /// A store with one read connection, so the reader measured is the one
    /// that read the value; and a job holding 3 MB of input.
    private func storeWithLargeJob(
        checkIntegrity: Bool = false
    ) async throws -> (SQLiteJobStore, TemporaryFolder, Int64) {
        let folder = try TemporaryFolder()
        let configuration = SQLiteJobStoreConfiguration(
            path: folder.file("jobs.sqlite"), maxValueBytes: 8 << 20, maxReaders: 1)
        let store = try SQLiteJobStore(configuration)
        let input = String(repeating: "0123456789abcdef", count: 3 << 16)
        let id = try await store.submit(job(input: input)).id
        return (store, folder, id)
    }

    @Test func readConnectionsLetGoOfTheirCachedPages() async throws {
        let (store, folder, id) = try await storeWithLargeJob()
        _ = folder
        let read = try await store.job(id)
        #expect(read?.job.input?.count == 3 << 20)
        let before = try store.readerCacheBytes()
        #expect(before > 2 << 20, "reading 3 MB through the reader should fill its cache, it holds \(before) bytes")

        store.releaseIdleMemory()
        var after = try store.readerCacheBytes()
        let deadline = ContinuousClock.now + .seconds(10)
        while after > 256 << 10, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            after = try store.readerCacheBytes()
        }
        #expect(after <= 256 << 10, "the reader's cache holds \(after) bytes after the release (\(before) before)")
        // The store reads on as before.
        #expect(try await store.job(id)?.job.input?.count == 3 << 20)
    }

    @Test func anIntegrityCheckAtOpenLeavesTheWritersCacheEmpty() async throws {
        let (store, folder, _) = try await storeWithLargeJob()
        try await store.close()
        let reopened = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(
                path: folder.file("jobs.sqlite"), maxValueBytes: 8 << 20, maxReaders: 1, checkIntegrity: true))
        let cached = reopened.writerCacheBytes()
        #expect(cached < 1 << 20, "the writer's cache holds \(cached) bytes after the check read a 3 MB file")
        try await reopened.close()
    }
}
