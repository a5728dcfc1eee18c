import ArgumentParser
import Foundation
import JobEngine

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check jobd.yaml and the job definitions; no daemon needed.",
        discussion: """
            Without paths: the config jobd would use and its definitions folder. With paths: those \
            definition files (or folders of them), checked against the config's queues and pools when a \
            config is found, else against the defaults. Every problem is printed as \
            path:line:column: error: message. Exit status 0 if there is no error (warnings allowed), 65 if \
            there is one, 78 if no config can be found.

            Examples:
              jobctl validate
              jobctl validate /etc/jobd/jobs.d/nightly-report.yaml
              jobctl validate --config ./staging/jobd.yaml --json
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("Definition files or folders to check.", valueName: "path"),
              completion: .file(extensions: ["yaml", "yml"]))
    var paths: [String] = []

    func run() async throws {
        try await options.run { session in
            let (configPath, names, diagnostics) = try check(session)
            let errors = diagnostics.filter { $0.severity == .error }.count
            let warnings = diagnostics.count - errors
            if session.json {
                session.console.out(JSON.object([
                    ("ok", .bool(errors == 0)),
                    ("config", .optional(configPath)),
                    ("definitions", .array(names.map(JSON.string))),
                    ("diagnostics", .array(diagnostics.map(Self.json))),
                ]).pretty)
            } else {
                var text = diagnostics.map { "\($0)\n" }.joined()
                let checked = (configPath.map { "\($0) and " } ?? "") + Session.count(names.count, "definition")
                text += errors == 0
                    ? "ok: \(checked)" + (warnings > 0 ? ", \(Session.count(warnings, "warning"))" : "") + "\n"
                    : "\(Session.count(errors, "error")), \(Session.count(warnings, "warning")) in \(checked == "0 definitions" ? "the files" : checked)\n"
                session.console.out(text)
            }
            if errors > 0 {
                var failure = JobctlError(.invalidDefinitions, "\(Session.count(errors, "error")) found")
                failure.reportedOnStdout = true
                throw failure
            }
        }
    }

    /// The config checked (if any), the names of the valid definitions, and every problem.
    private func check(_ session: Session) throws(JobctlError) -> (String?, [String], [Diagnostic]) {
        if paths.isEmpty {
            let location = try session.locateConfig()
            let daemon = DaemonConfig.load(path: location.path)
            let result = Configuration.load(at: location)
            // Configuration.load keeps the valid definitions only when all are valid: list them from the folder.
            let folder = daemon.value.map { DefinitionLoader(config: $0).loadFolder($0.definitions) }
            return (location.path, folder?.names ?? [], result.diagnostics)
        }
        var config: DaemonConfig?
        do throws(JobctlError) {
            config = try session.daemonConfig()
        } catch where error.code == .config && options.config == nil {
            // No config anywhere (or a broken one): check the files against the defaults.
            session.console.note("no usable jobd.yaml (\(error.message)): checking against the default queues and pools")
        }
        let loader = config.map { DefinitionLoader(config: $0) } ?? DefinitionLoader()
        var diagnostics: [Diagnostic] = []
        var names: [String] = []
        var files: [String] = []
        let cwd = FileManager.default.currentDirectoryPath
        for path in paths.map({ ConfigPaths.resolve($0, against: cwd) }) {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                let set = loader.loadFolder(path)
                names += set.names
                diagnostics += set.diagnostics
            } else {
                files.append(path)
            }
        }
        let set = loader.loadFiles(files)
        return (config?.sourcePath, names + set.names, diagnostics + set.diagnostics)
    }

    static func json(_ diagnostic: Diagnostic) -> JSON {
        .object([
            ("path", .string(diagnostic.position.path)),
            ("line", .int(diagnostic.position.line)),
            ("column", .int(diagnostic.position.column)),
            ("severity", .string(diagnostic.severity.rawValue)),
            ("code", .string(diagnostic.code.rawValue)),
            ("message", .string(diagnostic.message)),
        ])
    }
}
