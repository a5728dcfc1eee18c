import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Four processes write to one new database at once — creating it, migrating
/// it, submitting (with shared idempotency keys), claiming, finishing — and
/// none of them sees "database is locked" or any other error.
@Suite struct ContentionTests {
    @Test(.timeLimit(.minutes(5)))
    func fourProcessesWriteAtOnce() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("shared.sqlite")
        let helper = try helperExecutable()
        let jobsEach = 600
        let children = try (0..<4).map { try ChildProcess(helper, ["contend", path, String($0), String(jobsEach)]) }
        var keys: [String: Set<Int64>] = [:]
        var created = 0
        for (worker, child) in children.enumerated() {
            let ended = await child.finish()
            #expect(ended.status == 0 && !ended.signaled, "worker \(worker) failed: \(ended.stderr)")
            #expect(!ended.stderr.localizedCaseInsensitiveContains("locked"), "\(ended.stderr)")
            #expect(ended.stderr.isEmpty, "worker \(worker): \(ended.stderr)")
            for line in ended.lines {
                let fields = line.split(separator: " ")
                if fields.first == "key" { keys[String(fields[1]), default: []].insert(Int64(fields[2])!) }
                if fields.first == "done" { created += Int(fields[1])! }
            }
        }
        // Every shared key named one job, the same in the 4 processes.
        #expect(keys.count == jobsEach / 10)
        #expect(keys.values.allSatisfy { $0.count == 1 }, "\(keys.filter { $0.value.count > 1 })")
        let expected = 4 * (jobsEach - jobsEach / 10) + jobsEach / 10
        #expect(created == expected)

        let store = try SQLiteJobStore(path: path)
        #expect(try await store.count("SELECT count(*) FROM jobs") == expected)
        #expect(try await store.count("SELECT count(*) FROM stages") == 2 * expected)
        #expect(try await store.count("SELECT count(*) FROM schema_migrations") == Schema.latestVersion)
        let finished = try await store.count("SELECT count(*) FROM jobs WHERE state = 'fulfilled'")
        #expect(finished > 0)
        #expect(try await store.count("SELECT count(*) FROM events") == finished)
        #expect(try await store.queryStrings("PRAGMA integrity_check") == ["ok"])
    }
}
