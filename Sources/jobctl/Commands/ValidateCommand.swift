import ArgumentParser
import Foundation
import JobConfig
import JobControl

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
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

    @Argument(
        help: ArgumentHelp("Definition files or folders to check.", valueName: "path"),
        completion: .file(extensions: ["yaml", "yml"]))
    var paths: [String] = []

    /// What was checked and found.
    struct Report {
        /// The config file checked, if any.
        var config: String?
        /// Whether that config itself is free of errors.
        var configValid = false
        /// The definitions that loaded.
        var names: [String] = []
        var diagnostics: [Diagnostic] = []

        var errors: Int { diagnostics.errorCount }
        var warnings: Int { diagnostics.warningCount }

        /// `ok: /etc/jobd/jobd.yaml and 3 definitions`, or
        /// `2 errors, 1 warning; valid: 3 definitions`.
        var summary: String {
            let valid =
                (configValid ? config.map { "\($0) and " } ?? "" : "") + Session.count(names.count, "definition")
            let warned = warnings > 0 ? Session.count(warnings, "warning") : nil
            guard errors > 0 else { return "ok: " + valid + (warned.map { ", " + $0 } ?? "") }
            return [Session.count(errors, "error"), warned].compactMap { $0 }.joined(separator: ", ") + "; valid: "
                + valid
        }
    }

    func run() async throws {
        try await options.run { session in
            let report = try check(session)
            if session.json {
                session.console.out(
                    JSON.fields([
                        ("ok", .bool(report.errors == 0)),
                        ("config", .optional(report.config)),
                        ("definitions", .array(report.names.map(JSON.string))),
                        ("diagnostics", .array(report.diagnostics.map(Self.json))),
                    ]).pretty)
            } else {
                session.console.out(report.diagnostics.map { "\($0)\n" }.joined() + report.summary + "\n")
            }
            if report.errors > 0 {
                var failure = JobctlError(.invalidDefinitions, "\(Session.count(report.errors, "error")) found")
                failure.reportedOnStdout = true
                throw failure
            }
        }
    }

    private func check(_ session: Session) throws(JobctlError) -> Report {
        if paths.isEmpty {
            let location = try session.locateConfig()
            let daemon = DaemonConfiguration.load(path: location.path)
            let result = Configuration.load(at: location)
            // Configuration.load gives the definitions only when everything is valid: list them from the folder.
            let folder = daemon.value.map { DefinitionLoader(config: $0).loadFolder($0.definitions) }
            return Report(
                config: location.path, configValid: daemon.value != nil, names: folder?.names ?? [],
                diagnostics: result.diagnostics)
        }
        var config: DaemonConfiguration?
        do throws(JobctlError) {
            config = try session.daemonConfig()
        } catch  where error.code == .config && options.config == nil {
            // No config anywhere (or a broken one): check the files against the defaults.
            session.console.note(
                "no usable jobd.yaml (\(error.message)): checking against the default queues and pools")
        }
        let loader = config.map { DefinitionLoader(config: $0) } ?? DefinitionLoader()
        var report = Report(config: config?.sourcePath, configValid: config != nil)
        var files: [String] = []
        let cwd = FileManager.default.currentDirectoryPath
        for path in paths.map({ ConfigPaths.resolve($0, against: cwd) }) {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                let set = loader.loadFolder(path)
                report.names += set.names
                report.diagnostics += set.diagnostics
            } else {
                files.append(path)
            }
        }
        let set = loader.loadFiles(files)
        report.names += set.names
        report.diagnostics += set.diagnostics
        return report
    }

    static func json(_ diagnostic: Diagnostic) -> JSON {
        .fields([
            ("path", .string(diagnostic.position.path)),
            ("line", .int(diagnostic.position.line)),
            ("column", .int(diagnostic.position.column)),
            ("severity", .string(diagnostic.severity.rawValue)),
            ("code", .string(diagnostic.code.rawValue)),
            ("message", .string(diagnostic.message)),
        ])
    }
}
