import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// A process killed with SIGKILL while writing as fast as it can leaves a
/// database that opens, passes `PRAGMA integrity_check`, and holds every
/// write it acknowledged.
@Suite struct CrashConsistencyTests {
    @Test(.timeLimit(.minutes(3)))
    func killedWriterLosesNoAcknowledgedWrite() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("crash.sqlite")
        let child = try ChildProcess(try helperExecutable(), ["crash-writer", path])
        // Let it get well into its stride: at least 20,000 acknowledged stage results.
        let enough: @Sendable ([String]) -> Bool = { lines in
            lines.lazy.filter { $0.hasPrefix("stage") }.count >= 20_000
        }
        let seen = await child.waitForLines(timeout: .seconds(120), enough)
        #expect(enough(seen), "the writer stopped early")
        child.kill(SIGKILL)
        let ended = await child.finish()
        #expect(ended.signaled, "the child ended by itself (status \(ended.status)): \(ended.stderr)")
        #expect(ended.stderr.isEmpty, "\(ended.stderr)")

        var jobs: [Int64] = []
        var stages: [(Int64, Int)] = []
        for line in ended.lines {
            let fields = line.split(separator: " ")
            switch fields.first {
            case "job": jobs.append(Int64(fields[1])!)
            case "stage": stages.append((Int64(fields[1])!, Int(fields[2])!))
            default: Issue.record("unexpected line from the child: \(line)")
            }
        }
        #expect(stages.count >= 20_000)

        let store = try SQLiteJobStore(path: path)
        #expect(try await store.queryStrings("PRAGMA integrity_check") == ["ok"])
        #expect(try await store.scalar("PRAGMA journal_mode") == "wal")
        let storedJobs = Set(
            try await store.queryStrings("SELECT id FROM jobs").compactMap { $0.flatMap { Int64($0) } })
        let missingJobs = jobs.filter { !storedJobs.contains($0) }
        #expect(missingJobs.isEmpty, "acknowledged jobs missing: \(missingJobs.prefix(10))")
        let storedValues = try await store.queryStrings(
            "SELECT job_id || ' ' || position || ' ' || value FROM stages WHERE state = 'fulfilled'")
        let stored = Set(storedValues.compactMap { $0 })
        let missingStages = stages.filter { !stored.contains("\($0.0) \($0.1) j\($0.0)-p\($0.1)") }
        #expect(missingStages.isEmpty, "acknowledged stage results missing: \(missingStages.prefix(10))")
        // And the database takes writes again.
        _ = try await store.submit(job(input: "after the crash"))
        try await store.close()
    }
}
