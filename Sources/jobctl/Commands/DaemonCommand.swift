import ArgumentParser
import Foundation
import JobConfig
import JobControl

struct Daemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Ask jobd whether it runs: version, pid, running and pending jobs.",
        discussion: """
            Asks over jobd's unix socket (`socket:` in jobd.yaml). Exit status 0 if jobd answers, 69 if it \
            is not running, 77 if this user may not connect to its socket.

            Examples:
              jobctl daemon
              jobctl ping --json
            """,
        aliases: ["ping"])

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let status: DaemonStatus?
            do throws(ControlError) {
                status = try ControlClient.status(socketPath: config.socket)
            } catch  where error.code == .permissionDenied {
                throw JobctlError(.permissionDenied, PermissionAdvice.socketMessage(path: config.socket))
            } catch {
                throw JobctlError(.daemonFailed, error.message)
            }
            guard let status else {
                if session.json {
                    session.console.out(
                        JSON.fields([("running", .bool(false)), ("socket", .string(config.socket))]).pretty)
                }
                var failure = JobctlError(
                    .daemonNotRunning, "jobd is not running (nothing listens on \(config.socket))")
                failure.reportedOnStdout = session.json
                throw failure
            }
            if session.json {
                session.console.out(Self.json(status, socket: config.socket).pretty)
                return
            }
            let draining = status.draining ? ", draining (claims no more jobs)" : ""
            var text = "jobd \(status.version) is running: pid \(status.pid), since \(status.startedAt)\(draining)\n"
            text += "  jobs    \(status.running) running, \(status.pending) pending\n"
            let pools = status.pools.sorted { $0.key < $1.key }.map { name, running in
                "\(name) \(running)" + (config.pools[name].map { "/\($0)" } ?? "")
            }
            if !pools.isEmpty { text += "  pools   \(pools.joined(separator: ", "))\n" }
            if let skew = status.clockSkew { text += "  clock   \(Self.clockText(skew))\n" }
            text += "  config  \(status.config)\n"
            session.console.out(text)
        }
    }

    static func json(_ status: DaemonStatus, socket: String) -> JSON {
        .fields([
            ("running", .bool(true)),
            ("socket", .string(socket)),
            ("version", .string(status.version)),
            ("pid", .int(Int64(status.pid))),
            ("jobs_running", .int(status.running)),
            ("jobs_pending", .int(status.pending)),
            ("pools", .fields(status.pools.sorted { $0.key < $1.key }.map { ($0.key, JSON.int($0.value)) })),
            ("draining", .bool(status.draining)),
            ("started_at", .string(status.startedAt)),
            ("config", .string(status.config)),
            ("clock_skew_seconds", status.clockSkew.map { .number(String(format: "%.3f", $0)) } ?? .null),
        ])
    }

    /// How jobd's host clock stands to the database's; more than a second
    /// off is flagged (jobd decides by the database's clock either way).
    static func clockText(_ skew: Double) -> String {
        guard abs(skew) > 1 else { return "within 1s of the database's" }
        let side = skew > 0 ? "ahead of" : "behind"
        return String(format: "%.1fs ", abs(skew)) + side
            + " the database's: jobd goes by the database's clock; fix the host's time"
    }
}
