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
        // Bytes, not Characters: called for every variable of every child.
        let bytes = name.utf8
        return bytes.elementsEqual("NOTIFY_SOCKET".utf8) || bytes.starts(with: "WATCHDOG_".utf8)
            || bytes.starts(with: "LISTEN_".utf8)
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
        var environment = environment
        for name in environment.keys where isReserved(name) {
            environment.removeValue(forKey: name)
        }
        return environment
    }
}
