import JobValues
internal import Yams

/// Stage options (on, timeout, retry, env, cwd, idempotent) and the retry policy.
extension JobFileParser {
    struct StageOptions {
        var queue: String?
        var timeout: Duration?
        var retry: RetryPolicy
        var env: [String: String]
        var cwd: String?
        var idempotent: Bool
        var logLimit: Int
    }

    mutating func parseOptions(
        _ options: [String: NodeReader.Entry], what: String,
        defaults: StageDefaults
    ) -> StageOptions? {
        var result = StageOptions(
            queue: nil, timeout: nil, retry: defaults.retry, env: defaults.env,
            cwd: defaults.cwd, idempotent: true, logLimit: defaults.logLimit)
        var valid = true
        if let entry = options["on"] {
            if let queue = reader.name(entry.value, "'on' of \(what)") {
                if context.queues.contains(queue) {
                    result.queue = queue
                } else {
                    reader.error(
                        .unknownQueue, at: entry.value,
                        "unknown queue '\(queue)' in 'on' of \(what); jobd.yaml's 'Q' declares \(Self.list(context.queues))"
                    )
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let entry = options["timeout"] {
            if let timeout = reader.duration(entry.value, "'timeout' of \(what)") {
                result.timeout = timeout
            } else {
                valid = false
            }
        }
        if let entry = options["retry"] {
            if let retry = parseRetry(entry.value, over: defaults.retry, "'retry' of \(what)") {
                result.retry = retry
            } else {
                valid = false
            }
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
            if let flag = reader.bool(entry.value, "'idempotent' of \(what)") {
                result.idempotent = flag
            } else {
                valid = false
            }
        }
        if let entry = options["logs"] {
            if let limit = parseLogs(entry.value, "'logs' of \(what)") {
                result.logLimit = limit
            } else {
                valid = false
            }
        }
        return valid ? result : nil
    }

    /// `logs: { max: SIZE }`: how much of an attempt's stderr is kept.
    mutating func parseLogs(_ node: Node, _ what: String) -> Int? {
        guard let entries = reader.entries(of: node, what) else { return nil }
        var limit = StageDefinition.defaultLogLimit
        var valid = true
        for entry in entries {
            switch entry.key {
            case "max":
                guard let size = reader.size(entry.value, "'max' of \(what)") else {
                    valid = false
                    continue
                }
                guard size <= StageDefinition.maxLogLimit else {
                    reader.error(
                        .invalidValue, at: entry.value,
                        "'max' of \(what) must be at most \(StageDefinition.maxLogLimit), found \(size)")
                    valid = false
                    continue
                }
                limit = size.bytes
            default:
                reader.unknownKey(entry, in: what, known: ["max"])
                valid = false
            }
        }
        return valid ? limit : nil
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
                if let n = reader.int(entry.value, "'attempts' of \(what)", in: RetryPolicy.attemptsRange) {
                    if n > 1_000 {
                        reader.error(
                            .invalidValue, at: entry.value, "'attempts' of \(what) must be at most 1000, found \(n)")
                        valid = false
                    } else {
                        policy.attempts = n
                    }
                } else {
                    valid = false
                }
            case "backoff":
                if let d = reader.duration(entry.value, "'backoff' of \(what)", allowZero: true) {
                    policy.backoff = d
                } else {
                    valid = false
                }
            case "max-backoff":
                if let d = reader.duration(entry.value, "'max-backoff' of \(what)", allowZero: true) {
                    policy.maxBackoff = d
                } else {
                    valid = false
                }
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
            reader.error(
                .invalidValue, at: node, "\(what) must be an absolute path, found \"\(NodeReader.excerpt(path))\"")
            return nil
        }
        return path
    }

    static func list(_ names: Set<String>) -> String {
        names.isEmpty ? "none" : names.sorted().map { "'\($0)'" }.joined(separator: ", ")
    }
}
