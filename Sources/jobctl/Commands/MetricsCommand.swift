import ArgumentParser
import JobConfig
import JobControl

struct Metrics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print jobd's metrics in the Prometheus text format.",
        discussion: """
            The same exposition jobd serves at /metrics when `http:` is set in jobd.yaml, asked over its unix \
            socket instead — so a sandboxed jobd without network access can still feed node_exporter's textfile \
            collector (docs/operations.md). Exit status 0 if jobd answers, 69 if it is not running, 77 if this \
            user may not connect to its socket.

            Examples:
              jobctl metrics
              jobctl metrics > /var/lib/node_exporter/textfile/jobd.prom.$$ && mv /var/lib/node_exporter/textfile/jobd.prom.$$ /var/lib/node_exporter/textfile/jobd.prom
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let reply: ControlReply
            do throws(ControlError) {
                reply = try ControlClient.send(ControlRequest(.metrics), to: config.socket)
            } catch  where error.code == .permissionDenied {
                throw JobctlError(.permissionDenied, PermissionAdvice.socketMessage(path: config.socket))
            } catch  where error.code == .notRunning {
                throw JobctlError(.daemonNotRunning, "jobd is not running (nothing listens on \(config.socket))")
            } catch {
                throw JobctlError(.daemonFailed, error.message)
            }
            guard let text = reply.metrics else {
                throw JobctlError(.daemonFailed, "jobd answered without metrics (an older jobd?)")
            }
            if session.json {
                session.console.out(JSON.fields([("metrics", .string(text))]).pretty)
            } else {
                session.console.out(text)
            }
        }
    }
}
