internal import Yams

/// `unique: { key, while, period, on-conflict }`.
extension JobFileParser {
    static let uniqueKeys = ["key", "while", "period", "on-conflict"]

    mutating func parseUnique(_ node: Node) -> Uniqueness? {
        let what = "the job's 'unique'"
        guard let entries = reader.entries(of: node, what) else { return nil }
        var key: FlowLimit.KeySource?
        var whileRunning = true
        var period: Duration?
        var onConflict = Uniqueness.OnConflict.skip
        var valid = true
        for entry in entries {
            switch entry.key {
            case "key":
                if let source = parseLimitKey(entry.value, "'key' of \(what)") { key = source } else { valid = false }
            case "while":
                if let running = parseUniqueStates(entry.value, "'while' of \(what)") {
                    whileRunning = running
                } else {
                    valid = false
                }
            case "period":
                if let duration = reader.duration(entry.value, "'period' of \(what)") {
                    period = duration
                } else {
                    valid = false
                }
            case "on-conflict":
                let choices = Uniqueness.OnConflict.allCases.map(\.rawValue).joined(separator: ", ")
                if let text = reader.name(entry.value, "'on-conflict' of \(what)") {
                    if let action = Uniqueness.OnConflict(rawValue: text) {
                        onConflict = action
                    } else {
                        reader.error(
                            .invalidValue, at: entry.value,
                            "'on-conflict' of \(what) is one of \(choices), found '\(NodeReader.excerpt(text))'")
                        valid = false
                    }
                } else {
                    valid = false
                }
            default:
                reader.unknownKey(entry, in: what, known: Self.uniqueKeys)
                valid = false
            }
        }
        guard valid else { return nil }
        guard let key else {
            reader.error(
                .missingKey, at: node,
                "\(what) needs a 'key': input, key (the job's --key) or {json: .path}")
            return nil
        }
        return Uniqueness(key: key, whileRunning: whileRunning, period: period, onConflict: onConflict)
    }

    /// `[pending]` or `[pending, running]`: whether a running job holds its key.
    private mutating func parseUniqueStates(_ node: Node, _ what: String) -> Bool? {
        guard let items = reader.sequence(node, what) else { return nil }
        var states: Set<String> = []
        for item in items {
            guard let state = reader.name(item, "a state in \(what)") else { return nil }
            guard state == "pending" || state == "running" else {
                reader.error(
                    .invalidValue, at: item,
                    "\(what) lists pending and running, the states in which a job holds its key; "
                        + "found '\(NodeReader.excerpt(state))' (for a key held after the job ends, use 'period')")
                return nil
            }
            states.insert(state)
        }
        guard states.contains("pending") else {
            reader.error(
                .invalidValue, at: node,
                "\(what) must include pending: a job is pending when submitted, and holds its key from then")
            return nil
        }
        return states.contains("running")
    }
}
