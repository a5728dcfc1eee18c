import JobValues
internal import Yams

extension DaemonConfiguration {
    /// Reads and checks the config file at `path` (absolute). Every problem in
    /// the file is reported; `value` is nil if any is an error.
    public static func load(path: String) -> LoadResult<DaemonConfiguration> {
        let (config, diagnostics) = read(path: path)
        return LoadResult(value: diagnostics.containsErrors ? nil : config, diagnostics: diagnostics)
    }

    /// Checks `yaml` as the contents of the config file at `path`; relative
    /// paths inside resolve against `path`'s folder. An empty file gives the
    /// defaults.
    public static func parse(yaml: String, path: String) -> LoadResult<DaemonConfiguration> {
        let (config, diagnostics) = read(yaml: yaml, path: path)
        return LoadResult(value: diagnostics.containsErrors ? nil : config, diagnostics: diagnostics)
    }

    /// The config as far as it could be read, with every problem found: the
    /// keys that were valid hold their values, the others their defaults. Nil
    /// only when the file could not be read or is not YAML.
    static func read(path: String) -> (config: DaemonConfiguration?, diagnostics: [Diagnostic]) {
        let path = ConfigPaths.normalize(path)
        let (text, readProblems) = ConfigFile.read(path: path)
        guard let text else { return (nil, readProblems) }
        return read(yaml: text, path: path)
    }

    static func read(yaml: String, path: String) -> (config: DaemonConfiguration?, diagnostics: [Diagnostic]) {
        let path = ConfigPaths.normalize(path)
        let folder = ConfigPaths.folder(of: path)
        var config = DaemonConfiguration.defaults(relativeTo: folder)
        config.sourcePath = path

        let (root, syntaxProblems) = YAMLSource.compose(yaml, path: path)
        guard syntaxProblems.isEmpty else { return (nil, syntaxProblems) }
        guard let root, !NodeReader.isNull(root) else { return (config, []) }

        var reader = NodeReader(path: path)
        ConfigParser(folder: folder).parse(root, into: &config, reader: &reader)
        return (config, reader.diagnostics.sortedByPosition())
    }
}

/// The rules of jobd.yaml, key by key.
private struct ConfigParser {
    let folder: String

    static let topKeys = [
        "database", "node", "definitions", "socket", "Q", "pools", "log", "store",
        "shutdown-grace", "kill-grace", "poll-interval", "lease", "http",
    ]

    func parse(_ root: Node, into config: inout DaemonConfiguration, reader: inout NodeReader) {
        guard let entries = reader.entries(of: root, "jobd.yaml") else { return }
        var httpNode: Node?
        for entry in entries {
            let value = entry.value
            switch entry.key {
            case "database":
                guard let text = reader.nonEmptyString(value, "'database'") else { continue }
                if PostgresURL.isURL(text) {
                    // A URL is kept as written: it is no path to resolve.
                    if let problem = DaemonConfiguration.databaseURLProblem(text) {
                        reader.error(.invalidValue, at: value, problem)
                    } else {
                        config.database = text
                    }
                } else if let problem = PostgresURL.mistypedURLProblem(text) {
                    // Never a SQLite path: jobd would make folders named after it, password and all.
                    reader.error(.invalidValue, at: value, "'database': \(problem)")
                } else {
                    config.database = ConfigPaths.resolve(text, against: folder)
                }
            case "node":
                guard let text = reader.nonEmptyString(value, "'node'") else { continue }
                if let problem = DaemonConfiguration.nodeProblem(text) {
                    reader.error(.invalidValue, at: value, problem)
                } else {
                    config.node = text
                }
            case "definitions":
                if let text = reader.nonEmptyString(value, "'definitions'") {
                    config.definitions = ConfigPaths.resolve(text, against: folder)
                }
            case "socket":
                if let text = reader.nonEmptyString(value, "'socket'") {
                    config.socket = ConfigPaths.resolve(text, against: folder)
                }
            case "Q":
                parseQueues(value, into: &config.queues, reader: &reader)
            case "pools":
                parsePools(value, into: &config.pools, limits: &config.poolLimits, reader: &reader)
            case "log":
                parseLog(value, into: &config.log, reader: &reader)
            case "store":
                parseStore(value, into: &config.store, reader: &reader)
            case "shutdown-grace":
                if let grace = reader.duration(value, "'shutdown-grace'", allowZero: true) {
                    config.shutdownGrace = grace
                }
            case "kill-grace":
                if let grace = reader.duration(value, "'kill-grace'", allowZero: true) {
                    config.killGrace = grace
                }
            case "poll-interval":
                if let interval = reader.duration(value, "'poll-interval'", allowZero: false) {
                    config.pollInterval = interval
                }
            case "lease":
                if let lease = reader.duration(value, "'lease'", allowZero: false) {
                    if DaemonConfiguration.leaseRange.contains(lease) {
                        config.lease = lease
                    } else {
                        reader.error(
                            .invalidValue, at: value,
                            "'lease' must be from 3s to 1h: jobd renews it every sixth of it, and another host takes a dead host's jobs over once it has passed"
                        )
                    }
                }
            case "http":
                parseHTTP(value, into: &config.http, reader: &reader)
                httpNode = value
            default:
                reader.unknownKey(entry, in: "jobd.yaml", known: Self.topKeys)
            }
        }
        // Once `socket` is known, wherever it stands in the file.
        if let httpNode, case .unix(let path) = config.http?.listen, path == config.socket {
            reader.error(
                .invalidValue, at: httpNode,
                "'http' listens on \(path), which is the control socket's path ('socket'); give the listener a path of its own, e.g. unix:\(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])/http.sock"
            )
        }
    }

    /// `Q: { NAME: { concurrency: N } }`; `map` and `return` keep their
    /// defaults unless given.
    func parseQueues(_ node: Node, into queues: inout [String: QueueConfiguration], reader: inout NodeReader) {
        guard let entries = reader.entries(of: node, "'Q'") else { return }
        guard entries.count <= DaemonConfiguration.maxQueues else {
            reader.error(
                .invalidValue, at: node,
                "'Q' names \(entries.count) queues; at most \(DaemonConfiguration.maxQueues) are allowed")
            return
        }
        for entry in entries {
            guard let name = reader.name(entry.keyNode, "the queue name") else { continue }
            let what = "queue '\(name)'"
            guard let fields = reader.entries(of: entry.value, what) else { continue }
            var concurrency: Int?
            var sawConcurrency = false
            for field in fields {
                switch field.key {
                case "concurrency":
                    sawConcurrency = true
                    concurrency = reader.int(
                        field.value, "'concurrency' of \(what)", in: QueueConfiguration.concurrencyRange)
                default:
                    reader.unknownKey(field, in: what, known: ["concurrency"])
                }
            }
            if !sawConcurrency {
                reader.error(.missingKey, at: entry.value, "\(what) needs 'concurrency', e.g. { concurrency: 4 }")
            }
            if let concurrency { queues[name] = QueueConfiguration(concurrency: concurrency) }
        }
    }

    /// `pools: { NAME: N }` or `{ NAME: { size: N, limit: { global: M } } }`;
    /// `default` keeps its default unless given.
    func parsePools(
        _ node: Node, into pools: inout [String: Int], limits: inout [String: Int], reader: inout NodeReader
    ) {
        guard let entries = reader.entries(of: node, "'pools'") else { return }
        guard entries.count <= DaemonConfiguration.maxPools else {
            reader.error(
                .invalidValue, at: node,
                "'pools' names \(entries.count) pools; at most \(DaemonConfiguration.maxPools) are allowed")
            return
        }
        for entry in entries {
            guard let name = reader.name(entry.keyNode, "the pool name") else { continue }
            if case .mapping = entry.value {
                parsePool(entry.value, name: name, into: &pools, limits: &limits, reader: &reader)
            } else if let size = reader.int(entry.value, "pool '\(name)'", in: DaemonConfiguration.poolSizeRange) {
                pools[name] = size
            }
        }
    }

    /// `{ size: N, limit: { global: M } }` of pool `name`.
    private func parsePool(
        _ node: Node, name: String, into pools: inout [String: Int], limits: inout [String: Int],
        reader: inout NodeReader
    ) {
        let what = "pool '\(name)'"
        guard let entries = reader.entries(of: node, what) else { return }
        var size: Int?
        for entry in entries {
            switch entry.key {
            case "size":
                size = reader.int(entry.value, "'size' of \(what)", in: DaemonConfiguration.poolSizeRange)
            case "limit":
                guard let limit = reader.entries(of: entry.value, "'limit' of \(what)") else { continue }
                for item in limit {
                    if item.key == "global" {
                        limits[name] = reader.int(
                            item.value, "'global' of the 'limit' of \(what)", in: 1...DaemonConfiguration.maxPoolLimit)
                    } else {
                        reader.unknownKey(
                            item, in: "the 'limit' of \(what) (per key: in a job definition)", known: ["global"])
                    }
                }
            default:
                reader.unknownKey(entry, in: what, known: ["size", "limit"])
            }
        }
        pools[name] = size ?? pools[name] ?? DaemonConfiguration.defaultPoolSize
    }

    /// `http: { listen: ADDRESS, … }` (the access keys: ``HTTPAccessConfiguration``).
    func parseHTTP(_ node: Node, into http: inout HTTPConfiguration?, reader: inout NodeReader) {
        guard let entries = reader.entries(of: node, "'http'") else { return }
        var sawListen = false
        var access = HTTPAccessConfiguration()
        for entry in entries {
            switch entry.key {
            case "listen":
                sawListen = true
                guard let text = reader.string(entry.value, "'listen' of 'http'") else { continue }
                do {
                    http = HTTPConfiguration(listen: try HTTPListenAddress.parse(text, relativeTo: folder))
                } catch {
                    reader.error(.invalidValue, at: entry.value, error.message)
                }
            case let key where HTTPAccessConfiguration.keys.contains(key):
                parseHTTPAccess(entry, into: &access, reader: &reader)
            default:
                reader.unknownKey(entry, in: "'http'", known: ["listen"] + HTTPAccessConfiguration.keys)
            }
        }
        if !sawListen {
            reader.error(.missingKey, at: node, "'http' needs 'listen', e.g. { listen: 127.0.0.1:9464 }")
        }
        http?.access = access
        if let listen = http?.listen {
            checkHTTPAccess(access, listen: listen, at: node, reader: &reader)
        }
    }

    func parseLog(_ node: Node, into log: inout LogConfiguration, reader: inout NodeReader) {
        guard let entries = reader.entries(of: node, "'log'") else { return }
        for entry in entries {
            switch entry.key {
            case "level":
                guard let text = reader.string(entry.value, "'level' of 'log'") else { continue }
                if let level = LogConfiguration.Level(rawValue: text.lowercased()) {
                    log.level = level
                } else {
                    let levels = LogConfiguration.Level.allCases.map(\.rawValue).joined(separator: ", ")
                    reader.error(.invalidValue, at: entry.value, "unknown log level '\(text)'; use one of \(levels)")
                }
            case "journal":
                if let flag = reader.bool(entry.value, "'journal' of 'log'") { log.journal = flag }
            default:
                reader.unknownKey(entry, in: "'log'", known: ["level", "journal"])
            }
        }
    }

    func parseStore(_ node: Node, into store: inout StoreConfiguration, reader: inout NodeReader) {
        guard let entries = reader.entries(of: node, "'store'") else { return }
        for entry in entries {
            switch entry.key {
            case "durability":
                guard let text = reader.string(entry.value, "'durability' of 'store'") else { continue }
                if let durability = StoreConfiguration.Durability(rawValue: text) {
                    store.durability = durability
                } else {
                    reader.error(.invalidValue, at: entry.value, "unknown durability '\(text)'; use normal or full")
                }
            case "value-cap":
                guard let size = reader.size(entry.value, "'value-cap' of 'store'") else { continue }
                let limit = ByteSize.storedValueLimit
                if size.bytes < 1024 {
                    reader.error(
                        .invalidValue, at: entry.value, "'value-cap' of 'store' must be at least 1KiB, found \(size)")
                } else if size > limit {
                    reader.error(
                        .invalidValue, at: entry.value,
                        "'value-cap' of 'store' must be at most \(limit) (SQLite holds at most 1,000,000,000 bytes "
                            + "in a row, and a value is kept in memory whole), found \(size)")
                } else {
                    store.valueCap = size
                }
            case "retention":
                if case let .scalar(scalar) = entry.value, scalar.string == "forever" {
                    store.retention = .forever
                } else if let duration = reader.duration(
                    entry.value, "'retention' of 'store' (a duration or 'forever')")
                {
                    store.retention = .duration(duration)
                }
            default:
                reader.unknownKey(entry, in: "'store'", known: ["durability", "value-cap", "retention"])
            }
        }
    }
}

// MARK: The access keys of `http:` (HTTPAccessConfiguration)

extension HTTPAccessConfiguration {
    /// The keys of `http:` besides `listen`.
    static let keys = ["users", "users-credential", "public", "trusted-proxies", "session", "operator-group"]
}

extension ConfigParser {
    /// One access key of `http:`.
    func parseHTTPAccess(
        _ entry: NodeReader.Entry, into access: inout HTTPAccessConfiguration, reader: inout NodeReader
    ) {
        switch entry.key {
        case "users":
            guard let path = reader.nonEmptyString(entry.value, "'users' of 'http'") else { return }
            access.users = .file(ConfigPaths.resolve(path, against: folder))
        case "users-credential":
            guard let name = reader.nonEmptyString(entry.value, "'users-credential' of 'http'") else { return }
            guard !name.contains("/") else {
                reader.error(
                    .invalidValue, at: entry.value,
                    "'users-credential' of 'http' is a credential's name (LoadCredential=NAME:PATH), not a path")
                return
            }
            access.users = .credential(name)
        case "public":
            guard let text = reader.string(entry.value, "'public' of 'http'") else { return }
            switch text {
            case "read": access.publicRead = true
            case "none": access.publicRead = false
            default:
                reader.error(
                    .invalidValue, at: entry.value,
                    "'public' of 'http' is read (every page readable without a login) or none, found '\(text)'")
            }
        case "trusted-proxies":
            guard let addresses = reader.stringList(entry.value, "'trusted-proxies' of 'http'") else { return }
            for address in addresses where !HTTPAccessConfiguration.isIPAddress(address) {
                reader.error(
                    .invalidValue, at: entry.value,
                    "'trusted-proxies' of 'http' lists IP addresses; '\(address)' is not one")
                return
            }
            access.trustedProxies = addresses
        case "session":
            guard let lifetime = reader.duration(entry.value, "'session' of 'http'") else { return }
            access.sessionLifetime = lifetime
        case "operator-group":
            guard let group = reader.nonEmptyString(entry.value, "'operator-group' of 'http'") else { return }
            access.operatorGroup = group
        default:
            break
        }
    }

    /// A listener other hosts can reach serves nobody it cannot tell apart
    /// unless that is asked for: it needs users, a trusted proxy, or `public: read`.
    func checkHTTPAccess(
        _ access: HTTPAccessConfiguration, listen: HTTPListenAddress, at node: Node, reader: inout NodeReader
    ) {
        guard !listen.isLocal, !access.authenticates, !access.publicRead else { return }
        reader.error(
            .invalidValue, at: node,
            "'http' listens on \(listen), which other hosts can reach, without authentication: give 'users' "
                + "(or 'users-credential', or 'trusted-proxies'), or 'public: read' to let anyone read the dashboard")
    }
}
