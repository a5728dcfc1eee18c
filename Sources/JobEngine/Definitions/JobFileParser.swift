internal import Yams

/// The rules of one job definition file. Collects every problem; produces a
/// definition only when there is none.
struct JobFileParser {
    let context: DefinitionContext
    /// The name to use when the file has no `name:` (its base name).
    let defaultName: String
    var reader: NodeReader

    static let jobKeys = ["name", "description", "pool", "timeout", "retry", "env", "cwd", "pipeline"]
    static let actionKeys = ["run", "shell", "sleep", "fail", "transform", "all", "any"]
    static let optionKeys = ["on", "timeout", "retry", "env", "cwd", "idempotent"]
    static let processActionKeys = ["run", "shell", "sleep", "fail"]

    init(path: String, defaultName: String, context: DefinitionContext) {
        self.context = context
        self.defaultName = defaultName
        self.reader = NodeReader(path: path)
    }

    mutating func parse(_ root: Node?) -> JobDefinition? {
        guard let root, !NodeReader.isNull(root) else {
            reader.error(.emptyPipeline, at: .file(reader.path),
                         "the file is empty; a job definition needs at least a 'pipeline' of stages")
            return nil
        }
        guard let entries = reader.entries(of: root, "a job definition") else { return nil }
        var byKey: [String: NodeReader.Entry] = [:]
        for entry in entries {
            if Self.jobKeys.contains(entry.key) {
                byKey[entry.key] = entry
            } else {
                reader.unknownKey(entry, in: "a job definition", known: Self.jobKeys)
            }
        }
        let start = reader.position(of: root)
        var valid = true
        func check<T>(_ value: T?) -> T? {
            if value == nil { valid = false }
            return value
        }

        var name = defaultName
        var namePosition = SourcePosition(path: reader.path, line: 1, column: 1)
        if let entry = byKey["name"] {
            name = check(reader.name(entry.value, "the job name")) ?? name
            namePosition = reader.position(of: entry.value)
        } else if let problem = NodeReader.nameProblem(defaultName) {
            reader.error(.invalidName, at: .file(reader.path),
                         "the file's base name \"\(defaultName)\" \(problem); rename the file or add 'name:'")
            valid = false
        }

        var description: String?
        if let entry = byKey["description"] { description = check(reader.string(entry.value, "'description'")) }

        var pool = DaemonConfig.defaultPool
        if let entry = byKey["pool"], let given = check(reader.name(entry.value, "'pool'")) {
            if context.pools.contains(given) {
                pool = given
            } else {
                reader.error(.unknownPool, at: entry.value,
                             "unknown pool '\(given)'; jobd.yaml's 'pools' declares \(Self.list(context.pools))")
                valid = false
            }
        }

        var timeout: Duration?
        if let entry = byKey["timeout"] { timeout = check(reader.duration(entry.value, "the job's 'timeout'")) }

        var retry = RetryPolicy.default
        if let entry = byKey["retry"] { retry = check(parseRetry(entry.value, over: retry, "the job's 'retry'")) ?? retry }

        var env: [String: String] = [:]
        if let entry = byKey["env"] { env = check(reader.environment(entry.value, "the job's 'env'")) ?? env }

        var cwd: String?
        if let entry = byKey["cwd"] { cwd = check(parseDirectory(entry.value, "the job's 'cwd'")) }

        var stages: [StageDefinition] = []
        if let entry = byKey["pipeline"] {
            let defaults = StageDefaults(retry: retry, env: env, cwd: cwd)
            if let parsed = parsePipeline(entry.value, defaults: defaults) { stages = parsed } else { valid = false }
        } else {
            reader.error(.missingKey, at: start, "a job definition needs a 'pipeline': a list of stages")
            valid = false
        }

        guard valid, !reader.diagnostics.containsErrors else { return nil }
        return JobDefinition(name: name, description: description, pool: pool, timeout: timeout, retry: retry,
                             env: env, cwd: cwd, stages: stages, sourcePosition: namePosition)
    }

    /// What stages inherit from their job.
    struct StageDefaults {
        var retry: RetryPolicy
        var env: [String: String]
        var cwd: String?
    }

    // MARK: Pipeline

    mutating func parsePipeline(_ node: Node, defaults: StageDefaults) -> [StageDefinition]? {
        guard let items = reader.sequence(node, "'pipeline'") else { return nil }
        guard !items.isEmpty else {
            reader.error(.emptyPipeline, at: node, "the pipeline is empty; add at least one stage, e.g. '- then: work'")
            return nil
        }
        var stages: [StageDefinition] = []
        var valid = true
        var firstUse: [String: SourcePosition] = [:]
        var seenCatch: SourcePosition?
        for (position, item) in items.enumerated() {
            let stage = parseStage(item, position: position, defaults: defaults)
            if let definition = stage.definition { stages.append(definition) } else { valid = false }
            if let name = stage.name, let namePosition = stage.namePosition {
                if let earlier = firstUse[name] {
                    reader.error(.duplicateStageName, at: namePosition,
                                 "duplicate stage name '\(name)' (first used at line \(earlier.line)); stage names must differ within a job")
                    valid = false
                } else {
                    firstUse[name] = namePosition
                }
            }
            // The shape PromiseKit's chain can take: `firstly` starts it, a
            // `catch` returns a finalizer that only takes `finally`, and
            // `finally` ends it.
            guard let kind = stage.kind, let kindPosition = stage.kindPosition else { continue }
            if kind == .firstly && position != 0 {
                reader.error(.misplacedStage, at: kindPosition, "'firstly' can only be the first stage; use 'then' here")
                valid = false
            }
            if let catchPosition = seenCatch, kind != .finally {
                reader.error(.misplacedStage, at: kindPosition,
                             "only 'finally' can follow a 'catch' (line \(catchPosition.line)); move this '\(kind)' stage before the 'catch'")
                valid = false
            }
            if kind == .catch, seenCatch == nil { seenCatch = kindPosition }
            if kind == .finally && position != items.count - 1 {
                reader.error(.misplacedStage, at: kindPosition,
                             "'finally' must be the last stage; use 'ensure' for a stage that always runs mid-pipeline")
                valid = false
            }
        }
        return valid ? stages : nil
    }

    /// What was learnt of a stage: its definition when it is valid, and its
    /// kind and name (when readable) for the checks across stages.
    struct ParsedStage {
        var definition: StageDefinition?
        var kind: StageKind?
        var kindPosition: SourcePosition?
        var name: String?
        var namePosition: SourcePosition?
    }

    mutating func parseStage(_ node: Node, position: Int, defaults: StageDefaults) -> ParsedStage {
        let what = "stage \(position + 1)"
        var parsed = ParsedStage()
        guard let entries = reader.entries(of: node, what) else { return parsed }
        var valid = true
        func check<T>(_ value: T?) -> T? {
            if value == nil { valid = false }
            return value
        }

        // Sort the keys: the kind, the action, the options.
        var kinds: [(StageKind, NodeReader.Entry)] = []
        var actions: [NodeReader.Entry] = []
        var options: [String: NodeReader.Entry] = [:]
        for entry in entries {
            if let kind = StageKind(rawValue: entry.key) {
                kinds.append((kind, entry))
            } else if Self.actionKeys.contains(entry.key) {
                actions.append(entry)
            } else if Self.optionKeys.contains(entry.key) {
                options[entry.key] = entry
            } else {
                reader.unknownKey(entry, in: what,
                                  known: StageKind.allCases.map(\.rawValue) + Self.actionKeys + Self.optionKeys)
                valid = false
            }
        }

        guard let (kind, kindEntry) = kinds.first else {
            reader.error(.missingStageKind, at: node,
                         "\(what) has no kind; start it with one of \(StageKind.allCases.map(\.rawValue).joined(separator: ", ")) and its name, e.g. '- then: fetch'")
            // Still check the rest of the stage so every problem shows at once.
            for entry in actions { _ = parseAction(entry, "'\(entry.key)' of \(what)") }
            _ = parseOptions(options, what: what, defaults: defaults)
            return parsed
        }
        parsed.kind = kind
        parsed.kindPosition = reader.position(of: kindEntry.keyNode)
        for (extra, entry) in kinds.dropFirst() {
            reader.error(.multipleStageKinds, at: entry.keyNode,
                         "\(what) has two kinds, '\(kind)' and '\(extra)'; a stage has exactly one (split it into two stages)")
            valid = false
        }
        let name = check(reader.name(kindEntry.value, "the name of \(what)"))
        if let name {
            parsed.name = name
            parsed.namePosition = reader.position(of: kindEntry.value)
        }
        let label = name.map { "stage '\($0)'" } ?? what

        // The action: exactly one, and one this kind takes.
        var action: Action?
        var accepted: [NodeReader.Entry] = []
        for entry in actions {
            if let problem = Self.actionProblem(entry.key, kind: kind) {
                reader.error(.actionNotAllowed, at: entry.keyNode, problem)
                valid = false
            } else {
                accepted.append(entry)
            }
        }
        if accepted.count > 1 {
            for entry in accepted.dropFirst() {
                reader.error(.multipleActions, at: entry.keyNode,
                             "\(label) has two actions, '\(accepted[0].key)' and '\(entry.key)'; a stage has exactly one")
            }
            valid = false
        }
        if let first = accepted.first {
            action = check(parseAction(first, "'\(first.key)' of \(label)"))
        } else if actions.isEmpty {
            reader.error(.missingAction, at: kindEntry.keyNode, "\(label) has no action; \(Self.actionHint(for: kind))")
            valid = false
        }

        let parsedOptions = parseOptions(options, what: label, defaults: defaults)
        guard valid, let name, let action, let parsedOptions else { return parsed }
        parsed.definition = StageDefinition(
            position: position, name: name, kind: kind, action: action, queueOverride: parsedOptions.queue,
            timeout: parsedOptions.timeout, retry: parsedOptions.retry, env: parsedOptions.env,
            cwd: parsedOptions.cwd, idempotent: parsedOptions.idempotent,
            sourcePosition: reader.position(of: kindEntry.keyNode))
        return parsed
    }

    /// Why `key` cannot be the action of a `kind` stage, or nil if it can.
    static func actionProblem(_ key: String, kind: StageKind) -> String? {
        switch (key, kind) {
        case ("transform", .map), ("all", .when), ("any", .race):
            return nil
        case ("transform", _):
            return "'transform' only goes in a 'map' stage; this is a '\(kind)' stage"
        case ("all", _):
            return "'all' only goes in a 'when' stage; this is a '\(kind)' stage"
        case ("any", _):
            return "'any' only goes in a 'race' stage; this is a '\(kind)' stage"
        case (_, .map):
            return "a 'map' stage takes a 'transform', not '\(key)'; use a 'then' stage to \(key == "run" || key == "shell" ? "run a command" : key)"
        case (_, .when):
            return "a 'when' stage takes an 'all:' list of actions, not '\(key)'"
        case (_, .race):
            return "a 'race' stage takes an 'any:' list of actions, not '\(key)'"
        default:
            return nil
        }
    }

    static func actionHint(for kind: StageKind) -> String {
        switch kind {
        case .map: return "add 'transform:' (trim, upper, lower or {json: .path})"
        case .when: return "add 'all:' with a list of actions run in parallel, e.g. all: [{run: [a]}, {run: [b]}]"
        case .race: return "add 'any:' with a list of actions, e.g. any: [{run: [a]}, {sleep: 5s}]"
        default: return "add one of run: [argv…], shell: \"…\", sleep: DURATION or fail: \"message\""
        }
    }

    // MARK: Actions

    mutating func parseAction(_ entry: NodeReader.Entry, _ what: String) -> Action? {
        let node = entry.value
        switch entry.key {
        case "run":
            guard let argv = reader.stringList(node, what) else { return nil }
            guard !argv[0].isEmpty else {
                reader.error(.invalidValue, at: node, "\(what): the program (the first item) must not be empty")
                return nil
            }
            if argv.contains(where: { $0.utf8.contains(0) }) {
                reader.error(.invalidValue, at: node, "\(what): arguments cannot contain NUL bytes")
                return nil
            }
            return .run(argv)
        case "shell":
            guard let script = reader.nonEmptyString(node, what) else { return nil }
            return .shell(script)
        case "sleep":
            return reader.duration(node, what, allowZero: true).map(Action.sleep)
        case "fail":
            return reader.nonEmptyString(node, what).map(Action.fail)
        case "transform":
            return parseTransform(node, what).map(Action.transform)
        case "all", "any":
            guard let items = reader.sequence(node, what) else { return nil }
            guard !items.isEmpty else {
                reader.error(.invalidValue, at: node, "\(what) must list at least one action")
                return nil
            }
            var parsed: [Action] = []
            for (index, item) in items.enumerated() {
                if let action = parseListedAction(item, "item \(index + 1) of \(what)") { parsed.append(action) }
            }
            guard parsed.count == items.count else { return nil }
            return entry.key == "all" ? .all(parsed) : .any(parsed)
        default:
            return nil
        }
    }

    /// One item of `all:` / `any:`: a mapping with one process-like action.
    mutating func parseListedAction(_ node: Node, _ what: String) -> Action? {
        guard let entries = reader.entries(of: node, what) else { return nil }
        var found: [NodeReader.Entry] = []
        for entry in entries {
            if Self.processActionKeys.contains(entry.key) {
                found.append(entry)
            } else if Self.actionKeys.contains(entry.key) {
                reader.error(.actionNotAllowed, at: entry.keyNode,
                             "'\(entry.key)' cannot be nested in \(what); use run, shell, sleep or fail")
            } else {
                reader.unknownKey(entry, in: what, known: Self.processActionKeys)
            }
        }
        guard let first = found.first else {
            if entries.allSatisfy({ Self.processActionKeys.contains($0.key) }) {
                reader.error(.missingAction, at: node, "\(what) has no action; write e.g. {run: [prog, arg]}")
            }
            return nil
        }
        for extra in found.dropFirst() {
            reader.error(.multipleActions, at: extra.keyNode,
                         "\(what) has two actions, '\(first.key)' and '\(extra.key)'; write one per item")
        }
        guard found.count == 1, entries.count == 1 else { return nil }
        return parseAction(first, "'\(first.key)' of \(what)")
    }

    mutating func parseTransform(_ node: Node, _ what: String) -> Transform? {
        let choices = "use trim, upper, lower or {json: .path}"
        switch node {
        case let .scalar(scalar) where !NodeReader.isNull(node):
            guard let transform = Transform.named[scalar.string] else {
                reader.error(.badTransform, at: node, "unknown transform '\(scalar.string)'; \(choices)")
                return nil
            }
            return transform
        case .mapping:
            guard let entries = reader.entries(of: node, what) else { return nil }
            guard entries.count == 1, let entry = entries.first, entry.key == "json" else {
                let bad = entries.first { $0.key != "json" }
                reader.error(.badTransform, at: bad?.keyNode ?? node,
                             "a transform mapping holds exactly one key, 'json' (e.g. {json: .total}); \(choices)")
                return nil
            }
            guard let text = reader.nonEmptyString(entry.value, "the 'json' path") else { return nil }
            do {
                return .json(try JSONPath(parsing: text))
            } catch {
                reader.error(.badTransform, at: entry.value, error.message)
                return nil
            }
        default:
            reader.error(.wrongType, at: node, "\(what) must be a transform, found \(NodeReader.describe(node)); \(choices)")
            return nil
        }
    }

    // MARK: Options

    struct StageOptions {
        var queue: String?
        var timeout: Duration?
        var retry: RetryPolicy
        var env: [String: String]
        var cwd: String?
        var idempotent: Bool
    }

    mutating func parseOptions(_ options: [String: NodeReader.Entry], what: String,
                               defaults: StageDefaults) -> StageOptions? {
        var result = StageOptions(queue: nil, timeout: nil, retry: defaults.retry, env: defaults.env,
                                  cwd: defaults.cwd, idempotent: true)
        var valid = true
        if let entry = options["on"] {
            if let queue = reader.name(entry.value, "'on' of \(what)") {
                if context.queues.contains(queue) {
                    result.queue = queue
                } else {
                    reader.error(.unknownQueue, at: entry.value,
                                 "unknown queue '\(queue)' in 'on' of \(what); jobd.yaml's 'Q' declares \(Self.list(context.queues))")
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let entry = options["timeout"] {
            if let timeout = reader.duration(entry.value, "'timeout' of \(what)") { result.timeout = timeout } else { valid = false }
        }
        if let entry = options["retry"] {
            if let retry = parseRetry(entry.value, over: defaults.retry, "'retry' of \(what)") { result.retry = retry } else { valid = false }
        }
        if let entry = options["env"] {
            if let env = reader.environment(entry.value, "'env' of \(what)") {
                result.env.merge(env) { _, stage in stage }
            } else {
                valid = false
            }
        }
        if let entry = options["cwd"] {
            if let cwd = parseDirectory(entry.value, "'cwd' of \(what)") { result.cwd = cwd } else { valid = false }
        }
        if let entry = options["idempotent"] {
            if let flag = reader.bool(entry.value, "'idempotent' of \(what)") { result.idempotent = flag } else { valid = false }
        }
        return valid ? result : nil
    }

    /// `retry: { attempts, backoff, max-backoff, jitter }`, each key laid
    /// over `base`.
    mutating func parseRetry(_ node: Node, over base: RetryPolicy, _ what: String) -> RetryPolicy? {
        guard let entries = reader.entries(of: node, what) else { return nil }
        var policy = base
        var valid = true
        for entry in entries {
            switch entry.key {
            case "attempts":
                if let n = reader.int(entry.value, "'attempts' of \(what)", minimum: 1) {
                    if n > 1_000 {
                        reader.error(.invalidValue, at: entry.value, "'attempts' of \(what) must be at most 1000, found \(n)")
                        valid = false
                    } else {
                        policy.attempts = n
                    }
                } else {
                    valid = false
                }
            case "backoff":
                if let d = reader.duration(entry.value, "'backoff' of \(what)", allowZero: true) { policy.backoff = d } else { valid = false }
            case "max-backoff":
                if let d = reader.duration(entry.value, "'max-backoff' of \(what)", allowZero: true) { policy.maxBackoff = d } else { valid = false }
            case "jitter":
                if let b = reader.bool(entry.value, "'jitter' of \(what)") { policy.jitter = b } else { valid = false }
            default:
                reader.unknownKey(entry, in: what, known: ["attempts", "backoff", "max-backoff", "jitter"])
                valid = false
            }
        }
        return valid ? policy : nil
    }

    /// A working directory: an absolute path (jobd's own directory is not a
    /// meaningful base).
    mutating func parseDirectory(_ node: Node, _ what: String) -> String? {
        guard let path = reader.nonEmptyString(node, what) else { return nil }
        guard path.hasPrefix("/") else {
            reader.error(.invalidValue, at: node, "\(what) must be an absolute path, found \"\(path)\"")
            return nil
        }
        return path
    }

    static func list(_ names: Set<String>) -> String {
        names.isEmpty ? "none" : names.sorted().map { "'\($0)'" }.joined(separator: ", ")
    }
}
