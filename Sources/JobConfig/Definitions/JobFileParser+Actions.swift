internal import Yams

/// Actions: run, shell, sleep, fail, transform, and the all/any lists.
extension JobFileParser {
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
            if script.utf8.contains(0) {
                reader.error(.invalidValue, at: node, "\(what): a shell script cannot contain NUL bytes")
                return nil
            }
            return .shell(script)
        case "sleep":
            return reader.duration(node, what, allowZero: true).map(Action.sleep)
        case "fail":
            return reader.nonEmptyString(node, what).map(Action.fail)
        case "transform":
            return parseTransform(node, what).map(Action.transform)
        case "definition":
            guard let name = reader.name(node, what) else { return nil }
            return .children(
                ChildSpec(
                    definition: name, items: .whole, settle: .failFast, maxChildren: 1,
                    sourcePosition: reader.position(of: node)))
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
                reader.error(
                    .actionNotAllowed, at: entry.keyNode,
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
            reader.error(
                .multipleActions, at: extra.keyNode,
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
                reader.error(
                    .badTransform, at: bad?.keyNode ?? node,
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
            reader.error(
                .wrongType, at: node, "\(what) must be a transform, found \(NodeReader.describe(node)); \(choices)")
            return nil
        }
    }
}
