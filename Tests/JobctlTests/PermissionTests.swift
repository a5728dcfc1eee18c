import Foundation
import JobConfig
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

/// A user outside the database's group: one line saying so and which group
/// to join, exit status 77, nothing written. Needs root, to run jobctl as
/// `nobody` with setpriv.
@Suite(.enabled(if: geteuid() == 0, "needs root to run jobctl as another user"))
struct PermissionTests {
    /// A group that exists and that `nobody` is not in.
    static let group = "adm"

    /// A sandbox whose `var/` (database and socket) belongs to root and `adm`,
    /// mode 0750, with a database of one job, mode 0640.
    private func lockedSandbox() async throws -> (Sandbox, [String]) {
        let sandbox = try Sandbox()
        let first = try await sandbox.jobctl(["submit", "hello", "--input", "first"])
        #expect(first.status == 0, "\(first)")
        let gid = try #require(getgrnam(Self.group)).pointee.gr_gid
        let folder = sandbox.folder + "/var"
        #expect(chown(folder, 0, gid) == 0 && chmod(folder, 0o750) == 0)
        #expect(chown(sandbox.databasePath, 0, gid) == 0 && chmod(sandbox.databasePath, 0o640) == 0)
        return (sandbox, try FileManager.default.contentsOfDirectory(atPath: folder).sorted())
    }

    @Test(arguments: [
        ["submit", "hello", "--input", "x"], ["submit", "hello", "--batch", "-"],
        ["status", "1"], ["list", "--pending"], ["cancel", "1"], ["retry", "1"], ["wait", "1"],
    ])
    func aUserOutsideTheGroupIsToldWhichGroupToJoin(_ arguments: [String]) async throws {
        let (sandbox, files) = try await lockedSandbox()
        let result = try await sandbox.jobctl(arguments, stdin: Data("a\nb\n".utf8), asNobody: true)
        #expect(result.status == 77, "\(result)")
        #expect(result.out.isEmpty)
        #expect(
            result.errLines == [
                "jobctl: error: permission denied: user nobody may not open the job database \(sandbox.databasePath) "
                    + "for writing, which jobctl needs even to read it (SQLite's -wal and -shm files beside it); "
                    + "join group `\(Self.group)` (sudo usermod -aG \(Self.group) nobody, "
                    + "then log in again), or run as the user that owns it"
            ], "\(result)")
        // Nothing written: the one job, as it was; no new file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.folder + "/var").sorted() == files)
        let job = try await sandbox.job(1).job
        #expect(try await sandbox.jobCount() == 1)
        #expect(job.state == .pending && job.attempt == 1 && !job.cancelRequested)
    }

    /// Root's group is no group to join: the message says to give the file jobd's.
    @Test func aDatabaseOfRootsGroupIsNotAGroupToJoin() async throws {
        let (sandbox, _) = try await lockedSandbox()
        let folder = sandbox.folder + "/var"
        #expect(chown(folder, 0, 0) == 0 && chown(sandbox.databasePath, 0, 0) == 0)
        let result = try await sandbox.jobctl(["list"], asNobody: true)
        #expect(result.status == 77, "\(result)")
        #expect(!result.stderr.contains("join group"), "\(result)")
        #expect(
            result.stderr.contains(
                "belong to group root, which no user should join: give them jobd's group "
                    + "(sudo chgrp jobd \(sandbox.databasePath) \(folder), with mode g+rw"), "\(result)")
    }

    @Test func withJSONTheErrorCodeSaysPermission() async throws {
        let (sandbox, _) = try await lockedSandbox()
        let result = try await sandbox.jobctl(["status", "1", "--json"], asNobody: true)
        #expect(result.status == 77, "\(result)")
        let error = try #require(try result.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "permission-denied")
    }

    @Test func jobdsSocketOutOfReachIsAPermissionError() async throws {
        let (sandbox, _) = try await lockedSandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let result = try await sandbox.jobctl(["daemon"], asNobody: true)
        #expect(result.status == 77, "\(result)")
        #expect(
            result.errLines == [
                "jobctl: error: permission denied: user nobody may not connect to jobd's socket \(sandbox.socketPath); "
                    + "join group `\(Self.group)` (sudo usermod -aG \(Self.group) nobody, then log in again)"
            ])
        #expect(daemon.received.isEmpty)
    }

    /// A database on a read-only filesystem: that is the reason given, not a
    /// mode or a group (root may write anything else).
    @Test func aDatabaseOnAReadOnlyFilesystemIsSaidToBe() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.jobctl(["submit", "hello", "--input", "x"]).status == 0)
        let folder = sandbox.folder + "/var"
        let saved = try makeTemporaryFolder()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            try FileManager.default.moveItem(atPath: folder + "/" + name, toPath: saved + "/" + name)
        }
        let mounted = try await runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", folder])
        try #require(mounted.status == 0, "\(mounted)")
        defer { _ = try? runCommand("/bin/umount", [folder]) }
        for name in try FileManager.default.contentsOfDirectory(atPath: saved) {
            try FileManager.default.copyItem(atPath: saved + "/" + name, toPath: folder + "/" + name)
        }
        try #require(try await runCommand("/bin/mount", ["-o", "remount,ro", folder]).status == 0)

        let result = try await sandbox.jobctl(["list"])
        #expect(result.status == 77, "\(result)")
        #expect(
            result.errLines == [
                "jobctl: error: the job database \(sandbox.databasePath) is on a read-only filesystem: jobctl writes beside "
                    + "it even to read it (the WAL's -shm file); mount it read-write, or copy the database with its -wal file elsewhere"
            ], "\(result)")
    }
}
