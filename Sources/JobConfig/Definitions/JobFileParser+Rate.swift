import JobValues
internal import Yams

/// `rate: N/WINDOW` and `rate-key:`.
extension JobFileParser {
    mutating func parseRate(_ node: Node, key keyNode: Node?, limit: FlowLimit?) -> FlowRate? {
        let what = "the job's 'rate'"
        let form = "write it as starts/window, e.g. 60/1m or 10/1s"
        guard let text = reader.string(node, what) else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            reader.error(.invalidValue, at: node, "\(what) \"\(text)\" is not N/WINDOW; \(form)")
            return nil
        }
        guard let count = Int(parts[0]), (1...FlowRate.maxCount).contains(count) else {
            reader.error(
                .invalidValue, at: node,
                "\(what) \"\(text)\": the number of starts must be an integer between 1 and \(FlowRate.maxCount); \(form)"
            )
            return nil
        }
        let window: Duration
        do {
            window = try Duration(parsing: parts[1])
        } catch {
            reader.error(.badDuration, at: node, "\(what) \"\(text)\": the window: \(error); \(form)")
            return nil
        }
        guard window >= FlowRate.minWindow && window <= FlowRate.maxWindow else {
            reader.error(
                .invalidValue, at: node,
                "\(what) \"\(text)\": the window must be between \(FlowRate.minWindow.milliseconds)ms and 1d")
            return nil
        }
        var rate = FlowRate(count: count, window: window)
        if let keyNode {
            guard let source = parseLimitKey(keyNode, "the job's 'rate-key'") else { return nil }
            // A job has one key (`jobs.limit_key`), counted by both.
            if let limitKey = limit?.key, limitKey != source {
                reader.error(
                    .invalidValue, at: keyNode,
                    "the job's 'rate-key' (\(source)) differs from the key of its 'limit' (\(limitKey)); "
                        + "a job has one key: make them the same, or drop one")
                return nil
            }
            rate.key = source
        }
        return rate
    }
}
