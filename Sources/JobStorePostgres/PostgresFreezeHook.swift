#if DEBUG || JOBD_TEST_HOOKS
import Foundation
import JobStore
internal import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// A test hook of debug builds and of builds for the tests
/// (`-DJOBD_TEST_HOOKS`, as `make test` builds): freezes this process inside a transaction
/// that holds a schedule's mark and this host's running jobs locked, as a
/// host frozen (SIGSTOP, a paused VM) or dead between two statements of a
/// write would leave them. `JOBD_TEST_STOP_IN_TRANSACTION=FILE` arms it once
/// FILE exists: the first occurrence this process fires then while it runs
/// jobs locks their rows as well, and the process stops itself (SIGSTOP)
/// before the transaction's COMMIT. The release build that `make` installs
/// has no such hook.
enum PostgresFreezeHook {
    /// The file whose existence arms the hook.
    static let flag = ProcessInfo.processInfo.environment["JOBD_TEST_STOP_IN_TRANSACTION"]

    /// Stops the process if the hook is armed and `session` could lock a
    /// running job of this process (`NODE/PID/TAG`).
    static func stopIfArmed(_ session: PostgresSession) async throws {
        guard let flag, !flag.isEmpty, FileManager.default.fileExists(atPath: flag) else { return }
        let locked = try await session.execute(
            "SELECT id FROM {s}.jobs WHERE state = 'running' AND lease_owner LIKE $1 FOR UPDATE", "%/\(getpid())/%")
        guard locked > 0 else { return }
        _ = kill(getpid(), SIGSTOP)
    }
}
#endif
