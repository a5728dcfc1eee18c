internal import Yams

/// `limit: { global, key, per-key, order }`.
extension JobFileParser {
    static let limitKeys = ["global", "key", "per-key", "order"]

    mutating func parseLimit(_ node: Node) -> FlowLimit? {
        let what = "the job's 'limit'"
        guard let entries = reader.entries(of: node, what) else { return nil }
        var limit = FlowLimit()
        var valid = true
        var keyNode: Node?
        for entry in entries {
            switch entry.key {
            case "global":
                if let n = reader.int(entry.value, "'global' of \(what)", in: 1...FlowLimit.maxSlots) {
                    limit.global = n
                } else {
                    valid = false
                }
            case "per-key":
                if let n = reader.int(entry.value, "'per-key' of \(what)", in: 1...FlowLimit.maxSlots) {
                    limit.perKey = n
                } else {
                    valid = false
                }
            case "order":
                let choices = FlowLimit.Order.allCases.map(\.rawValue).joined(separator: " or ")
                if let text = reader.name(entry.value, "'order' of \(what)") {
                    if let order = FlowLimit.Order(rawValue: text) {
                        limit.order = order
                    } else {
                        reader.error(
                            .invalidValue, at: entry.value, "'order' of \(what) is \(choices), found '\(text)'")
                        valid = false
                    }
                } else {
                    valid = false
                }
            case "key":
                keyNode = entry.value
                if let source = parseLimitKey(entry.value, "'key' of \(what)") {
                    limit.key = source
                } else {
                    valid = false
                }
            default:
                reader.unknownKey(entry, in: what, known: Self.limitKeys)
                valid = false
            }
        }
        guard valid else { return nil }
        if limit.global == nil && limit.perKey == nil {
            reader.error(
                .invalidValue, at: node, "\(what) needs 'global', 'per-key' or both (jobs running at once)")
            return nil
        }
        if limit.key == nil && (limit.perKey != nil || limit.order == .fair) {
            reader.error(
                .missingKey, at: node,
                "\(what) has \(limit.perKey != nil ? "'per-key'" : "'order: fair'") but no 'key': "
                    + "add key: input, key: key (the job's --key) or key: {json: .path}")
            return nil
        }
        if limit.key != nil && limit.perKey == nil && limit.order == .fifo, let keyNode {
            reader.error(
                .invalidValue, at: keyNode, "\(what) has a 'key' but no 'per-key' and no 'order: fair' to use it for")
            return nil
        }
        return limit
    }

    /// `input`, `key`, or `{json: .path}`.
    mutating func parseLimitKey(_ node: Node, _ what: String) -> FlowLimit.KeySource? {
        let choices = "use input, key (the job's --key) or {json: .path}"
        if case let .scalar(scalar) = node, !NodeReader.isNull(node) {
            switch scalar.string {
            case "input": return .input
            case "key": return .key
            default:
                reader.error(.invalidValue, at: node, "unknown \(what) '\(scalar.string)'; \(choices)")
                return nil
            }
        }
        guard case .mapping = node else {
            reader.error(
                .wrongType, at: node, "\(what) must be a key source, found \(NodeReader.describe(node)); \(choices)")
            return nil
        }
        switch parseTransform(node, what) {
        case let .json(path)?: return .json(path)
        case nil: return nil
        default:
            reader.error(.invalidValue, at: node, "\(what): \(choices)")
            return nil
        }
    }
}
