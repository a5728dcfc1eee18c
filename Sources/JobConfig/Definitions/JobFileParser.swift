internal import Yams

/// The rules of one job definition file. Collects every problem; produces a
/// definition only when there is none.
struct JobFileParser {
    let context: DefinitionContext
    /// The name to use when the file has no `name:` (its base name).
    let defaultName: String
    var reader: NodeReader

    static let jobKeys = [
        "name", "description", "pool", "timeout", "retry", "env", "cwd", "logs", "pipeline", "schedule", "limit",
        "rate", "rate-key", "unique",
    ]
    static let actionKeys = ["run", "shell", "sleep", "fail", "transform", "all", "any", "definition"]
    /// How a stage with `definition:` splits its value and joins its children.
    static let childOptionKeys = ["items", "settle", "max-children"]
    static let optionKeys = ["on", "timeout", "retry", "env", "cwd", "idempotent", "logs"]
    static let processActionKeys = ["run", "shell", "sleep", "fail"]

    init(path: String, defaultName: String, context: DefinitionContext) {
        self.context = context
        self.defaultName = defaultName
        self.reader = NodeReader(path: path)
    }

    mutating func parse(_ root: Node?) -> JobDefinition? {
        guard let root, !NodeReader.isNull(root) else {
            reader.error(
                .emptyPipeline, at: .file(reader.path),
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
            reader.error(
                .invalidName, at: .file(reader.path),
                "the file's base name \"\(defaultName)\" \(problem); rename the file or add 'name:'")
            valid = false
        }

        var description: String?
        if let entry = byKey["description"] { description = check(reader.string(entry.value, "'description'")) }

        var pool = DaemonConfiguration.defaultPool
        if let entry = byKey["pool"], let given = check(reader.name(entry.value, "'pool'")) {
            if context.pools.contains(given) {
                pool = given
            } else {
                reader.error(
                    .unknownPool, at: entry.value,
                    "unknown pool '\(given)'; jobd.yaml's 'pools' declares \(Self.list(context.pools))")
                valid = false
            }
        }

        var timeout: Duration?
        if let entry = byKey["timeout"] { timeout = check(reader.duration(entry.value, "the job's 'timeout'")) }

        var retry = RetryPolicy.default
        if let entry = byKey["retry"] {
            retry = check(parseRetry(entry.value, over: retry, "the job's 'retry'")) ?? retry
        }

        var env: [String: String] = [:]
        if let entry = byKey["env"] { env = check(reader.environment(entry.value, "the job's 'env'")) ?? env }

        var cwd: String?
        if let entry = byKey["cwd"] { cwd = check(parseDirectory(entry.value, "the job's 'cwd'")) }

        var logLimit = StageDefinition.defaultLogLimit
        if let entry = byKey["logs"] { logLimit = check(parseLogs(entry.value, "the job's 'logs'")) ?? logLimit }

        var stages: [StageDefinition] = []
        if let entry = byKey["pipeline"] {
            let defaults = StageDefaults(retry: retry, env: env, cwd: cwd, logLimit: logLimit)
            if let parsed = parsePipeline(entry.value, defaults: defaults) { stages = parsed } else { valid = false }
        } else {
            reader.error(.missingKey, at: start, "a job definition needs a 'pipeline': a list of stages")
            valid = false
        }

        var schedules: [ScheduleDefinition] = []
        if let entry = byKey["schedule"] { schedules = check(parseSchedules(entry.value)) ?? [] }

        var limit: FlowLimit?
        if let entry = byKey["limit"] { limit = check(parseLimit(entry.value)) }

        var rate: FlowRate?
        if let entry = byKey["rate"] {
            rate = check(parseRate(entry.value, key: byKey["rate-key"]?.value, limit: limit))
        } else if let entry = byKey["rate-key"] {
            reader.error(
                .missingKey, at: entry.value, "the job's 'rate-key' needs a 'rate' (e.g. rate: 60/1m) to count under")
            valid = false
        }

        var unique: Uniqueness?
        if let entry = byKey["unique"] { unique = check(parseUnique(entry.value)) }

        guard valid, !reader.diagnostics.containsErrors else { return nil }
        var definition = JobDefinition(
            name: name, description: description, pool: pool, timeout: timeout, retry: retry,
            env: env, cwd: cwd, stages: stages, schedules: schedules, limit: limit, sourcePosition: namePosition)
        definition.rate = rate
        definition.poolLimited = context.limitedPools.contains(pool)
        definition.unique = unique
        return definition
    }

    /// What stages inherit from their job.
    struct StageDefaults {
        var retry: RetryPolicy
        var env: [String: String]
        var cwd: String?
        var logLimit: Int
    }
}
