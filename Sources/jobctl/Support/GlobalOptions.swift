import ArgumentParser

/// The options every jobctl command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The jobd.yaml to use.",
            discussion: "Default: $JOBD_CONFIG, else ./config/jobd.yaml, else /etc/jobd/jobd.yaml, as jobd finds it.",
            valueName: "path"),
        completion: .file(extensions: ["yaml", "yml"]))
    var config: String?

    @Flag(name: .long, help: "Print JSON on stdout instead of text (errors stay one line on stderr).")
    var json = false

    /// Runs a command's body in a session; on failure, and with `--json`,
    /// also prints `{"error": {…}}` on stdout before passing the error on.
    func run(_ body: (Session) async throws -> Void) async throws {
        let session = Session(options: self)
        do {
            try await body(session)
        } catch {
            let failure = JobctlError.from(error)
            if json && !failure.reportedOnStdout {
                session.console.out(JSON.object([("error", failure.json)]).pretty)
            }
            throw failure
        }
    }
}

extension JobctlError {
    var json: JSON {
        .object([
            ("code", .string(code.rawValue)),
            ("message", .string(message)),
            ("exit_status", .int(Int64(exitStatus.code))),
            ("details", .array(details.map(JSON.string))),
        ])
    }
}
