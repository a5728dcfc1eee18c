import Foundation
import JobStore
import JobStoreSQLite
import Testing

/// Command lines and data written to break jobctl.
@Suite struct HostileArgumentsTests {
    /// Runs jobctl through bash, so that an argument may hold any bytes
    /// (`$'\xff'`): `script` follows `jobctl` on the command line.
    func jobctlRaw(_ sandbox: Sandbox, _ script: String) async throws -> ChildResult {
        try await runChild(
            "/bin/bash", ["-c", "exec \"$0\" " + script + " --config \"$1\"", jobctlPath, sandbox.configPath],
            directory: sandbox.folder)
    }

    @Test func inputKeepsTheBytesOfItsArgument() async throws {
        let sandbox = try Sandbox()
        let result = try await jobctlRaw(sandbox, "submit hello --input $'\\xff\\xfe'")
        #expect(result.status == 0, "\(result)")
        let job = try await sandbox.job(1).job
        #expect(job.input.map(Array.init) == [0xFF, 0xFE])
        let equals = try await jobctlRaw(sandbox, "submit hello --input=$'a\\x80b'")
        #expect(equals.status == 0, "\(equals)")
        #expect(try await sandbox.job(2).job.input.map(Array.init) == [0x61, 0x80, 0x62])
    }

    /// Two keys whose bytes differ must never read the same: keys are
    /// text, and one that is not UTF-8 is refused (it would have been
    /// turned into U+FFFD, and `\xff` and `\xfe` into the same key).
    @Test func aKeyThatIsNotUTF8IsRefused() async throws {
        let sandbox = try Sandbox()
        let result = try await jobctlRaw(sandbox, "submit hello --input x --key $'\\xff'")
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("--key must be UTF-8 text"), "\(result)")
        #expect(try await sandbox.jobCount() == 0)
    }

    @Test func aNegativePriorityIsAValue() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.jobctl(["submit", "hello", "--priority", "-5"])
        #expect(result.status == 0, "\(result)")
        #expect(try await sandbox.job(1).job.priority == -5)
    }

    /// C1 controls (U+009B is a one-byte CSI) and bidi overrides reach the
    /// terminal escaped, like C0 controls.
    @Test func statusEscapesC1ControlsAndBidiOverrides() async throws {
        let sandbox = try Sandbox()
        let hostile = "a\u{9B}31mb\u{202E}c\u{2028}d"
        let id = try await sandbox.seed(.fulfilled, result: hostile)
        let result = try await sandbox.jobctl(["status", "\(id)"])
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("a\\u{9b}31mb\\u{202e}c\\u{2028}d"), "\(result)")
        for scalar in ["\u{9B}", "\u{202E}", "\u{2028}"] {
            #expect(!result.out.contains(scalar))
        }
    }
}

/// A user who owns the database, or is in its group already, is told what
/// to change (the mode), not to join a group.
@Suite(.enabled(if: geteuid() == 0, "needs root to run jobctl as another user"))
struct PermissionAdviceTests {
    @Test func theOwnerOfAReadOnlyDatabaseIsToldToChangeItsMode() async throws {
        let sandbox = try Sandbox()
        let nobody = try #require(getpwnam("nobody")).pointee
        let folder = sandbox.folder + "/var"
        #expect(chown(folder, nobody.pw_uid, nobody.pw_gid) == 0)
        #expect(
            chown(sandbox.databasePath, nobody.pw_uid, nobody.pw_gid) == 0 && chmod(sandbox.databasePath, 0o440) == 0)
        let result = try await sandbox.jobctl(["submit", "hello", "--input", "x"], asNobody: true)
        #expect(result.status == 77, "\(result)")
        #expect(
            result.stderr.contains("you own the file \(sandbox.databasePath) but its mode 440 denies you; chmod u+rw"),
            "\(result)")
        #expect(!result.stderr.contains("join group"), "\(result)")
    }
}
