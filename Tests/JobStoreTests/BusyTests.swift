import Dispatch
import Foundation
import JobValues
import Spawn
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Another connection holding the write lock makes writers wait, not fail —
/// up to the busy timeout, after which the error says what happened.
@Suite struct BusyTests {
    /// Starts `holder` holding the write lock; returns once it holds it.
    func hold(_ holder: SQLiteJobStore, until release: DispatchSemaphore) async throws -> Task<Void, any Error> {
        let held = DispatchSemaphore(value: 0)
        let task = Task { try await holder.holdWriteLock(held: { held.signal() }, until: release) }
        await onOwnThread { held.wait() }
        return task
    }

    @Test func writerWaitsForTheLockInsteadOfFailing() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let holder = try SQLiteJobStore(path: path)
        let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, busyTimeout: .seconds(30)))
        let release = DispatchSemaphore(value: 0)
        let holding = try await hold(holder, until: release)
        async let submitted = store.submit(job(input: "waited"))
        // Give the submit time to run into the lock, then let go.
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await store.count("SELECT count(*) FROM jobs") == 0)
        release.signal()
        let id = try await submitted.id
        try await holding.value
        #expect(try await store.job(id)?.job.input == Data("waited".utf8))
    }

    @Test func lockHeldPastTheBusyTimeoutGivesABusyErrorThatSaysSo() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let holder = try SQLiteJobStore(path: path)
        let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, busyTimeout: .milliseconds(100)))
        let release = DispatchSemaphore(value: 0)
        let holding = try await hold(holder, until: release)
        let error = await expectStoreError(.busy) { try await store.submit(job()) }
        release.signal()
        try await holding.value
        #expect(error?.message.contains("busy timeout") == true)
        #expect(error?.message.contains(path) == true)
        // Once the lock is free the same store writes again.
        _ = try await store.submit(job())
    }
}
