import Foundation
import GRDB
import GRDBSQLite
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

#if canImport(Glibc)
import Glibc
#endif

/// What the store does with values and files it cannot
/// hold: each is an error now, never a NULL or a silent loss.
@Suite struct HostileLimitTests {
    /// A bind SQLite refuses (a value past its length limit) fails the
    /// write: it used to be ignored, leaving the parameter NULL.
    @Test func aBindSQLiteRefusesIsAnError() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v)")
            sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, 16)
            let insert = try RawStatement(db, "INSERT INTO t (v) VALUES (?)")
            #expect {
                try insert.bind(1, value: Data(repeating: 0x61, count: 100))
            } throws: { error in
                (error as? DatabaseError)?.resultCode == .SQLITE_TOOBIG
            }
            #expect(throws: DatabaseError.self) { try insert.bind(1, String(repeating: "x", count: 100)) }
            #expect(throws: DatabaseError.self) {
                try insert.bind(1, value: Data([0xFF, 0x00] + Array(repeating: 1, count: 50)))
            }
            #expect(throws: DatabaseError.self) { try insert.bind(2, 7) }
            #expect(
                JobStoreError.wrap(DatabaseError(resultCode: .SQLITE_TOOBIG), path: "x", doing: "write").code
                    == .valueTooLarge)
        }
    }

    @Test func aValueCapPastWhatSQLiteHoldsIsRefused() async {
        let folder = try? TemporaryFolder()
        await expectStoreError(.invalidArgument) {
            try SQLiteJobStore(
                SQLiteJobStoreConfiguration(
                    path: folder!.file("x.sqlite"), maxValueBytes: SQLiteJobStoreConfiguration.maxValueBytesLimit + 1))
        }
    }

    @Test func aStoreToldNotToCreateCreatesNothing() async throws {
        let folder = try TemporaryFolder()
        let error = await expectStoreError(.databaseMissing) {
            try SQLiteJobStore(SQLiteJobStoreConfiguration(path: folder.file("none.sqlite"), createIfMissing: false))
        }
        #expect(error?.message.contains("jobd creates it when it first starts") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// Made 0660 whatever the umask: other users must not read every job's
    /// input and result with sqlite3.
    @Test func aNewDatabaseIsReadableByItsOwnerAndGroupOnly() async throws {
        let folder = try TemporaryFolder()
        let old = umask(0o022)
        defer { umask(old) }
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: folder.file("new.sqlite"), checkpointInterval: nil))
        _ = try await store.submit(job())
        for name in ["new.sqlite", "new.sqlite-wal", "new.sqlite-shm"] {
            let mode = try #require(
                FileManager.default.attributesOfItem(atPath: folder.file(name))[.posixPermissions] as? Int)
            #expect(mode == 0o660, "\(name): \(String(mode, radix: 8))")
        }
        try await store.close()
    }

    @Test func aRunAtPastYear9999IsRefused() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        await expectStoreError(.invalidArgument) {
            try await store.submit(job(runAt: Date(timeIntervalSince1970: 253_402_300_800)))
        }
        await expectStoreError(.invalidArgument) {
            try await store.submit(job(runAt: Date(timeIntervalSince1970: 1e300)))
        }
        #expect(try await store.count("SELECT count(*) FROM jobs") == 0)
        let id = try await store.submit(job(runAt: Date(timeIntervalSince1970: 253_402_300_799))).id
        #expect(try await store.scalar("SELECT run_at FROM jobs WHERE id = \(id)") == "9999-12-31T23:59:59.000Z")
        await expectStoreError(.invalidArgument) { try await store.retry(id, delay: .seconds(Int64.max)) }
        try await store.close()
    }

    @Test func aDamagedDatabaseIsRefusedAtOpen() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("damaged.sqlite")
        let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        _ = try await store.submit((0..<200).map { job(input: "input \($0) " + String(repeating: "x", count: 200)) })
        try await store.close()
        // Garbage over every page but the first (the header stays valid).
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4096))
        try handle.close()
        let error = await expectStoreError(.corrupt) {
            try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil, checkIntegrity: true))
        }
        #expect(error?.message.contains("restore the newest backup") == true, "\(String(describing: error))")
    }

    @Test(arguments: ["-wal", ""])
    func aFileRemovedUnderTheStoreIsNoticed(suffix: String) async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("watched.sqlite")
        let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, checkpointInterval: nil))
        _ = try await store.submit(job())
        try store.checkFiles()
        #expect(unlink(path + suffix) == 0)
        #expect {
            try store.checkFiles()
        } throws: { error in
            (error as? JobStoreError)?.code == .databaseReplaced
        }
        try? await store.close()
    }
}
