import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// A user who may not write the database is told so, by name.
@Suite struct PermissionTests {
    @Test func userWhoCannotWriteTheDatabaseIsToldSo() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let store = try SQLiteJobStore(path: path)
        _ = try await store.submit(job())
        try await store.close()

        if geteuid() == 0 {
            // root may write anything: ask a child running as `nobody`.
            chmod(folder.path, 0o755)
            let child = try ChildProcess(
                "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", try helperExecutable(), "open", path])
            let ended = await child.finish()
            #expect(ended.status == 1, "\(ended.lines) \(ended.stderr)")
            #expect(ended.lines.first == "error permission-denied", "\(ended.lines) \(ended.stderr)")
            let message = ended.lines.dropFirst().joined(separator: "\n")
            #expect(message.contains("permission denied"), "\(message)")
            #expect(message.contains(path), "\(message)")
        } else {
            chmod(path, 0o444)
            chmod(folder.path, 0o555)
            defer { chmod(folder.path, 0o755) }
            let error = await expectStoreError(.permissionDenied) { try SQLiteJobStore(path: path) }
            #expect(error?.message.contains("permission denied") == true)
        }
    }

    @Test func missingFolderIsNamed() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("no/such/folder/jobs.sqlite")
        let error = await expectStoreError(.cannotOpen) { try SQLiteJobStore(path: path) }
        #expect(error?.message.contains("does not exist") == true)
    }

    @Test func fileThatIsNotADatabaseIsNamed() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("notes.txt")
        try Data(String(repeating: "not a database\n", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        let error = await expectStoreError(.corrupt) { try SQLiteJobStore(path: path) }
        #expect(error?.message.contains(path) == true)
    }
}
