import Foundation

/// Every job definition of a folder, and every problem found in it.
public struct DefinitionSet: Sendable {
    /// The valid definitions, sorted by name. A file with any error
    /// contributes none; of two files declaring one name, the first (by file
    /// name) is kept.
    public var definitions: [JobDefinition]
    /// Every problem of every file, sorted by file, line and column.
    public var diagnostics: [Diagnostic]

    public init(definitions: [JobDefinition], diagnostics: [Diagnostic]) {
        self.definitions = definitions
        self.diagnostics = diagnostics
    }

    public subscript(name: String) -> JobDefinition? {
        definitions.first { $0.name == name }
    }

    public var names: [String] { definitions.map(\.name) }

    /// The names as one line of the log or of `jobd --check` shows them:
    /// sorted, all of them up to `limit`, else the first `limit` and how
    /// many more (`a, b, c and 9,998 more`) — `jobctl definitions` lists them all.
    public static func summary(of names: [String], limit: Int = 20) -> String {
        let sorted = names.sorted()
        guard sorted.count > limit else { return sorted.joined(separator: ", ") }
        return sorted.prefix(limit).joined(separator: ", ") + " and \(sorted.count - limit) more"
    }
}

/// Loads job definitions (`jobs.d/*.yaml`, one job per file) and checks them
/// against the queue and pool names of jobd.yaml.
public struct DefinitionLoader: Sendable {
    public var context: DefinitionContext

    public init(context: DefinitionContext = .defaults) {
        self.context = context
    }

    public init(config: DaemonConfiguration) {
        self.context = config.definitionContext
    }

    /// The file names a definitions folder contributes: `*.yaml` and `*.yml`,
    /// not hidden.
    public static func isDefinitionFile(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".yaml") || name.hasSuffix(".yml"))
    }

    /// Loads every definition file of `folder`, in file-name order.
    public func loadFolder(_ folder: String) -> DefinitionSet {
        let folder = ConfigPaths.normalize(folder)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            let problem = Diagnostic(
                code: .missingFolder, at: .file(folder),
                "the definitions folder does not exist; create it or fix 'definitions' in jobd.yaml")
            return DefinitionSet(definitions: [], diagnostics: [problem])
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            let problem = Diagnostic(
                code: .unreadableFile, at: .file(folder),
                "the definitions folder cannot be listed: \(error.localizedDescription)")
            return DefinitionSet(definitions: [], diagnostics: [problem])
        }
        var files: [String] = []
        var problems: [Diagnostic] = []
        let trusted = ConfigPaths.folder(of: folder)
        for name in names.filter(Self.isDefinitionFile).sorted() {
            let path = folder + "/" + name
            if ConfigFile.kind(of: path) == .folder {
                problems.append(
                    Diagnostic(
                        .warning, code: .unreadableFile, at: .file(path),
                        "a folder named like a definition file; skipped"))
            } else if let problem = Self.symlinkProblem(path, trusted: trusted) {
                problems.append(Diagnostic(code: .unreadableFile, at: .file(path), problem))
            } else {
                files.append(path)
            }
        }
        var set = loadFiles(files)
        set.diagnostics = (set.diagnostics + problems).sortedByPosition()
        return set
    }

    /// Why the definition file `path`, a symlink, is not followed; nil when
    /// it is not a symlink or may be followed.
    ///
    /// A symlink is followed only to a file inside `trusted` (the folder
    /// holding the definitions folder, `/etc/jobd`): jobd and jobctl quote
    /// lines of a file that is not a valid definition in their errors, which
    /// reach the journal, and a link to a file elsewhere (`/etc/shadow`) must
    /// not make them read it. A broken symlink is an error, never skipped.
    static func symlinkProblem(_ path: String, trusted: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
        guard let resolved = realpath(path, nil) else {
            if errno == ELOOP {
                return
                    "is a symlink loop (it points to \(target), which leads back to it); remove it or point it at a file"
            }
            return "is a broken symlink to \(target); remove it or fix its target"
        }
        defer { free(resolved) }
        let root =
            realpath(trusted, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? trusted
        let destination = String(cString: resolved)
        guard destination.hasPrefix(root == "/" ? "/" : root + "/") else {
            return "is a symlink to \(destination), outside \(root): definitions are followed through symlinks only "
                + "within \(root); copy the file there instead"
        }
        return nil
    }

    /// Loads these files as one set (names must differ across them).
    public func loadFiles(_ paths: [String]) -> DefinitionSet {
        var results: [LoadResult<JobDefinition>] = []
        for path in paths {
            let (text, problems) = ConfigFile.read(path: path)
            if let text {
                results.append(parse(yaml: text, path: path))
            } else {
                results.append(LoadResult(value: nil, diagnostics: problems))
            }
        }
        return combine(results)
    }

    /// Checks one definition file's text; `path` names it in diagnostics and
    /// gives the default job name.
    public func parse(yaml: String, path: String) -> LoadResult<JobDefinition> {
        let (root, syntaxProblems) = YAMLSource.compose(yaml, path: path)
        guard syntaxProblems.isEmpty else { return LoadResult(value: nil, diagnostics: syntaxProblems) }
        var parser = JobFileParser(path: path, defaultName: Self.baseName(of: path), context: context)
        let definition = parser.parse(root)
        let diagnostics = parser.reader.diagnostics.sortedByPosition()
        return LoadResult(
            value: diagnostics.containsErrors ? nil : definition,
            diagnostics: Self.capped(diagnostics, path: path))
    }

    /// The most problems reported for one file: a file of 200,000 bad
    /// stages is one mistake repeated, and a log of 200,000 lines hides
    /// everything else.
    public static let maxDiagnosticsPerFile = 20

    /// The first ``maxDiagnosticsPerFile`` of `diagnostics` (sorted by
    /// position), then one line, where the next would have been, that
    /// counts the rest — an error if any of the rest is one.
    static func capped(_ diagnostics: [Diagnostic], path: String) -> [Diagnostic] {
        guard diagnostics.count > maxDiagnosticsPerFile else { return diagnostics }
        let rest = diagnostics.dropFirst(maxDiagnosticsPerFile)
        let errors = rest.filter { $0.severity == .error }.count
        let counts = [(errors, "error"), (rest.count - errors, "warning")].filter { $0.0 > 0 }
            .map { "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")" }.joined(separator: " and ")
        var summary = Diagnostic(
            errors > 0 ? .error : .warning, code: .tooManyProblems, at: rest.first?.position ?? .file(path),
            "\(counts) not shown, from here on: only the first \(maxDiagnosticsPerFile) problems of a file are reported; "
                + "fix those (often one mistake repeated) and check again")
        summary.notShown = (errors, rest.count - errors)
        return Array(diagnostics.prefix(maxDiagnosticsPerFile)) + [summary]
    }

    /// Joins per-file results, reporting job names declared twice.
    private func combine(_ results: [LoadResult<JobDefinition>]) -> DefinitionSet {
        var diagnostics: [Diagnostic] = []
        var byName: [String: JobDefinition] = [:]
        for result in results {
            diagnostics += result.diagnostics
            guard let definition = result.value else { continue }
            if let first = byName[definition.name] {
                diagnostics.append(
                    Diagnostic(
                        code: .duplicateJobName, at: definition.sourcePosition,
                        "duplicate job name '\(definition.name)': \(first.sourcePosition) declares it already; job names must differ across files"
                    ))
            } else {
                byName[definition.name] = definition
            }
        }
        let problems = Self.childProblems(byName)
        diagnostics += problems.map(\.diagnostic)
        for problem in problems { byName[problem.definition] = nil }
        let definitions = byName.values.sorted { $0.name < $1.name }
        return DefinitionSet(definitions: definitions, diagnostics: diagnostics.sortedByPosition())
    }

    /// The job name a definition file gives by default, and the name jobctl
    /// looks its problems up by: `/x/jobs.d/hello.yaml` → `hello`.
    public static func baseName(of path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".yaml", ".yml"] where name.hasSuffix(suffix) {
            name.removeLast(suffix.count)
            break
        }
        return name
    }

    /// Stages that start child jobs (`definition:`) must name a loaded
    /// definition, and the children's children … may go at most
    /// ``ChildSpec/maxDepth`` levels down and never back to a definition
    /// above them: a cycle would start jobs without end, each holding rows
    /// and waiting on the next. Known when definitions load, so no job has
    /// to count its ancestors at run time.
    static func childProblems(_ byName: [String: JobDefinition]) -> [(definition: String, diagnostic: Diagnostic)] {
        var problems: [(String, Diagnostic)] = []
        func specs(_ definition: JobDefinition) -> [ChildSpec] {
            definition.stages.compactMap { stage in
                if case let .children(spec) = stage.action { return spec }
                return nil
            }
        }
        /// The longest chain of child definitions below `name` (0: starts none), or nil on a cycle.
        func depth(_ name: String, _ path: [String]) -> Int? {
            guard !path.contains(name) else { return nil }
            guard let definition = byName[name] else { return 0 }
            var deepest = 0
            for spec in specs(definition) {
                guard let below = depth(spec.definition, path + [name]) else { return nil }
                deepest = max(deepest, below + 1)
                if deepest > ChildSpec.maxDepth { return deepest }
            }
            return deepest
        }
        for definition in byName.values.sorted(by: { $0.name < $1.name }) {
            for spec in specs(definition) {
                guard byName[spec.definition] != nil else {
                    let known = DefinitionSet.summary(of: Array(byName.keys))
                    problems.append(
                        (
                            definition.name,
                            Diagnostic(
                                code: .unknownDefinition, at: spec.sourcePosition,
                                "no job definition named '\(spec.definition)' for the child jobs; the definitions are: \(known)"
                            )
                        ))
                    continue
                }
                switch depth(spec.definition, [definition.name]) {
                case nil:
                    problems.append(
                        (
                            definition.name,
                            Diagnostic(
                                code: .childrenTooDeep, at: spec.sourcePosition,
                                "the child jobs of '\(spec.definition)' lead back to '\(definition.name)': child jobs cannot start jobs of a definition above them"
                            )
                        ))
                case let levels? where levels + 1 > ChildSpec.maxDepth:
                    problems.append(
                        (
                            definition.name,
                            Diagnostic(
                                code: .childrenTooDeep, at: spec.sourcePosition,
                                "child jobs of '\(spec.definition)' start children \(levels) levels further down; at most \(ChildSpec.maxDepth) levels of child jobs are allowed below a job"
                            )
                        ))
                default:
                    break
                }
            }
        }
        return problems
    }
}
