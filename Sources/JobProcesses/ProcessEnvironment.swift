import Foundation

/// Builds a child's environment and keeps the daemon's systemd hand-over
/// variables out of it.
public enum ProcessEnvironment {
    /// The daemon's own environment.
    public static func inherited() -> [String: String] {
        ProcessInfo.processInfo.environment
    }

    /// Names that must never reach a child: systemd gave them to the daemon
    /// (sd_notify socket, watchdog, socket activation), and a child that
    /// used them would speak for the daemon (`NotifyAccess=main`).
    public static func isReserved(_ name: String) -> Bool {
        name == "NOTIFY_SOCKET" || name.hasPrefix("WATCHDOG_") || name.hasPrefix("LISTEN_")
    }

    /// `base`, with the stage's `env` laid over it, then `JOBD_JOB_ID`,
    /// `JOBD_STAGE` and `JOBD_ATTEMPT` (these always tell the truth), and
    /// no reserved name.
    public static func forStage(
        base: [String: String] = inherited(),
        jobID: Int64,
        stage: String,
        attempt: Int,
        stageEnvironment: [String: String] = [:]
    ) -> [String: String] {
        var environment = base
        environment.merge(stageEnvironment) { _, stage in stage }
        environment["JOBD_JOB_ID"] = String(jobID)
        environment["JOBD_STAGE"] = stage
        environment["JOBD_ATTEMPT"] = String(attempt)
        return sanitized(environment)
    }

    /// `environment` without the reserved names.
    public static func sanitized(_ environment: [String: String]) -> [String: String] {
        environment.filter { !isReserved($0.key) }
    }
}
