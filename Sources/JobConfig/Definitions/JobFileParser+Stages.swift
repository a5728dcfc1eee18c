internal import Yams

/// The pipeline and its stages: kinds, names, and the shape of the chain.
extension JobFileParser {
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
                    reader.error(
                        .duplicateStageName, at: namePosition,
                        "duplicate stage name '\(name)' (first used at line \(earlier.line)); stage names must differ within a job"
                    )
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
                reader.error(
                    .misplacedStage, at: kindPosition, "'firstly' can only be the first stage; use 'then' here")
                valid = false
            }
            if let catchPosition = seenCatch, kind != .finally {
                reader.error(
                    .misplacedStage, at: kindPosition,
                    "only 'finally' can follow a 'catch' (line \(catchPosition.line)); move this '\(kind)' stage before the 'catch'"
                )
                valid = false
            }
            if kind == .catch, seenCatch == nil { seenCatch = kindPosition }
            if kind == .finally && position != items.count - 1 {
                reader.error(
                    .misplacedStage, at: kindPosition,
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
        var what = "stage \(position + 1)"
        var parsed = ParsedStage()
        guard let entries = reader.entries(of: node, what) else { return parsed }
        // Name the stage in messages as soon as its name can be read.
        if let kindEntry = entries.first(where: { StageKind(rawValue: $0.key) != nil }),
            case let .scalar(scalar) = kindEntry.value, NodeReader.nameProblem(scalar.string) == nil
        {
            what = "stage '\(scalar.string)'"
        }
        var valid = true
        func check<T>(_ value: T?) -> T? {
            if value == nil { valid = false }
            return value
        }

        // Sort the keys: the kind, the action, the options.
        var kinds: [(StageKind, NodeReader.Entry)] = []
        var actions: [NodeReader.Entry] = []
        var options: [String: NodeReader.Entry] = [:]
        var childOptions: [String: NodeReader.Entry] = [:]
        for entry in entries {
            if let kind = StageKind(rawValue: entry.key) {
                kinds.append((kind, entry))
            } else if Self.actionKeys.contains(entry.key) {
                actions.append(entry)
            } else if Self.optionKeys.contains(entry.key) {
                options[entry.key] = entry
            } else if Self.childOptionKeys.contains(entry.key) {
                childOptions[entry.key] = entry
            } else {
                reader.unknownKey(
                    entry, in: what,
                    known: StageKind.allCases.map(\.rawValue) + Self.actionKeys + Self.optionKeys
                        + Self.childOptionKeys)
                valid = false
            }
        }

        guard let (kind, kindEntry) = kinds.first else {
            reader.error(
                .missingStageKind, at: node,
                "\(what) has no kind; start it with one of \(StageKind.allCases.map(\.rawValue).joined(separator: ", ")) and its name, e.g. '- then: fetch'"
            )
            // Still check the rest of the stage so every problem shows at once.
            for entry in actions { _ = parseAction(entry, "'\(entry.key)' of \(what)") }
            _ = parseOptions(options, what: what, defaults: defaults)
            return parsed
        }
        parsed.kind = kind
        parsed.kindPosition = reader.position(of: kindEntry.keyNode)
        for (extra, entry) in kinds.dropFirst() {
            reader.error(
                .multipleStageKinds, at: entry.keyNode,
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
                reader.error(
                    .multipleActions, at: entry.keyNode,
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

        if case let .children(spec) = action {
            action = check(parseChildOptions(childOptions, spec, kind: kind, label: label)).map(Action.children)
        } else {
            for entry in childOptions.values.sorted(by: { $0.key < $1.key }) {
                reader.error(
                    .actionNotAllowed, at: entry.keyNode,
                    "'\(entry.key)' only goes in an 'each' stage, beside 'definition:'")
                valid = false
            }
        }

        let parsedOptions = parseOptions(options, what: label, defaults: defaults)
        guard valid, let name, let action, let parsedOptions else { return parsed }
        parsed.definition = StageDefinition(
            position: position, name: name, kind: kind, action: action, queueOverride: parsedOptions.queue,
            timeout: parsedOptions.timeout, retry: parsedOptions.retry, env: parsedOptions.env,
            cwd: parsedOptions.cwd, idempotent: parsedOptions.idempotent, logLimit: parsedOptions.logLimit,
            sourcePosition: reader.position(of: kindEntry.keyNode))
        return parsed
    }

    /// Why `key` cannot be the action of a `kind` stage, or nil if it can.
    static func actionProblem(_ key: String, kind: StageKind) -> String? {
        switch (key, kind) {
        case ("transform", .map), ("all", .when), ("any", .race), ("definition", .each), ("definition", .then):
            return nil
        case ("definition", _):
            return
                "'definition' goes in an 'each' stage (one child job per item) or a 'then' stage (one child job); this is a '\(kind)' stage"
        case (_, .each):
            return "an 'each' stage takes 'definition:' (the child jobs' definition), not '\(key)'"
        case ("transform", _):
            return "'transform' only goes in a 'map' stage; this is a '\(kind)' stage"
        case ("all", _):
            return "'all' only goes in a 'when' stage; this is a '\(kind)' stage"
        case ("any", _):
            return "'any' only goes in a 'race' stage; this is a '\(kind)' stage"
        case (_, .map):
            return
                "a 'map' stage takes a 'transform', not '\(key)'; use a 'then' stage to \(key == "run" || key == "shell" ? "run a command" : key)"
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
        case .each: return "add 'definition:' naming the child jobs' definition, e.g. definition: resize-image"
        default: return "add one of run: [argv…], shell: \"…\", sleep: DURATION or fail: \"message\""
        }
    }

    /// `items`, `settle` and `max-children` of an `each` stage, laid over
    /// `spec`; a `then` stage starts one child with the whole value and takes none.
    mutating func parseChildOptions(
        _ options: [String: NodeReader.Entry], _ spec: ChildSpec, kind: StageKind, label: String
    ) -> ChildSpec? {
        guard kind == .each else {
            for entry in options.values.sorted(by: { $0.key < $1.key }) {
                reader.error(
                    .actionNotAllowed, at: entry.keyNode,
                    "'\(entry.key)' goes in an 'each' stage; a 'then' stage with 'definition:' starts one child job")
            }
            return options.isEmpty ? spec : nil
        }
        var spec = spec
        var valid = true
        spec.items = .lines
        spec.maxChildren = ChildSpec.defaultMaxChildren
        if let entry = options["items"] {
            switch entry.value {
            case let .scalar(scalar) where scalar.string == "lines":
                spec.items = .lines
            case .mapping:
                if case let .json(path)? = parseTransform(entry.value, "'items' of \(label)") {
                    spec.items = .json(path)
                } else {
                    valid = false
                }
            default:
                reader.error(
                    .invalidValue, at: entry.value,
                    "'items' of \(label) must be 'lines' or {json: .path} (a JSON array), found \(NodeReader.describe(entry.value))"
                )
                valid = false
            }
        }
        if let entry = options["settle"] {
            if let text = reader.string(entry.value, "'settle' of \(label)") {
                if let settle = ChildSpec.Settle(rawValue: text) {
                    spec.settle = settle
                } else {
                    reader.error(
                        .invalidValue, at: entry.value,
                        "'settle' of \(label) must be 'fail-fast' (the first rejected child rejects the stage) or 'all' (every child ends, the value lists each outcome), not '\(text)'"
                    )
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let entry = options["max-children"] {
            if let count = reader.int(entry.value, "'max-children' of \(label)", in: 1...1_000_000) {
                spec.maxChildren = count
            } else {
                valid = false
            }
        }
        return valid ? spec : nil
    }
}
