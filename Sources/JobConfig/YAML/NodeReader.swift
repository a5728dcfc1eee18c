import JobValues
internal import Yams

/// Walks a Yams node tree and collects diagnostics instead of stopping at
/// the first problem: every accessor reports what is wrong at the node's
/// line and column and returns nil, and the caller goes on.
struct NodeReader {
    let path: String
    private(set) var diagnostics: [Diagnostic] = []

    init(path: String) {
        self.path = path
    }

    /// One key/value pair of a mapping, the key as text.
    struct Entry {
        let key: String
        let keyNode: Node
        let value: Node
    }

    func position(of node: Node) -> SourcePosition {
        guard let mark = node.mark else { return .file(path) }
        return SourcePosition(path: path, line: mark.line, column: mark.column)
    }

    mutating func error(_ code: Diagnostic.Code, at node: Node, _ message: String) {
        diagnostics.append(Diagnostic(code: code, at: position(of: node), message))
    }

    mutating func error(_ code: Diagnostic.Code, at position: SourcePosition, _ message: String) {
        diagnostics.append(Diagnostic(code: code, at: position, message))
    }

    mutating func warning(_ code: Diagnostic.Code, at node: Node, _ message: String) {
        diagnostics.append(Diagnostic(.warning, code: code, at: position(of: node), message))
    }

    mutating func warning(_ code: Diagnostic.Code, at position: SourcePosition, _ message: String) {
        diagnostics.append(Diagnostic(.warning, code: code, at: position, message))
    }

    // MARK: Shapes

    /// The entries of a mapping, or nil (reported) if `node` is not one.
    /// Keys that are not plain text are reported and left out.
    mutating func entries(of node: Node, _ what: String) -> [Entry]? {
        guard case let .mapping(mapping) = node else {
            error(.wrongType, at: node, "\(what) must be a mapping of keys to values, found \(Self.describe(node))")
            return nil
        }
        var result: [Entry] = []
        for (key, value) in mapping {
            guard case let .scalar(scalar) = key else {
                error(.wrongType, at: key, "a key in \(what) must be text, found \(Self.describe(key))")
                continue
            }
            result.append(Entry(key: scalar.string, keyNode: key, value: value))
        }
        return result
    }

    /// Reports `entry` as a key that `what` does not know, suggesting the
    /// nearest known key when one is close.
    mutating func unknownKey(_ entry: Entry, in what: String, known: [String]) {
        var message = "unknown key '\(Self.excerpt(entry.key))' in \(what)"
        if let guess = Self.nearest(to: entry.key, among: known) {
            message += "; did you mean '\(guess)'?"
        } else {
            message += "; known keys: \(known.joined(separator: ", "))"
        }
        error(.unknownKey, at: entry.keyNode, message)
    }

    mutating func sequence(_ node: Node, _ what: String) -> [Node]? {
        guard case let .sequence(sequence) = node else {
            error(.wrongType, at: node, "\(what) must be a list, found \(Self.describe(node))")
            return nil
        }
        return Array(sequence)
    }

    // MARK: Scalars

    /// Scalar text, quoted or plain; numbers and booleans are taken as
    /// written (`run: [sleep, 5]` means the argument "5"). Null, lists and
    /// mappings are reported.
    mutating func string(_ node: Node, _ what: String) -> String? {
        guard case let .scalar(scalar) = node, !Self.isNull(node) else {
            error(.wrongType, at: node, "\(what) must be text, found \(Self.describe(node))")
            return nil
        }
        return scalar.string
    }

    /// Text that must not be empty.
    mutating func nonEmptyString(_ node: Node, _ what: String) -> String? {
        guard let text = string(node, what) else { return nil }
        guard !text.isEmpty else {
            error(.invalidValue, at: node, "\(what) must not be empty")
            return nil
        }
        return text
    }

    /// An integer in `range`. Every count a user writes has an upper bound:
    /// a number past what jobd can do (ten million queue slots) is an error
    /// when the file is read, not a stall when it is used.
    mutating func int(_ node: Node, _ what: String, in range: ClosedRange<Int>) -> Int? {
        guard case let .scalar(scalar) = node, !Self.isNull(node) else {
            error(.wrongType, at: node, "\(what) must be an integer, found \(Self.describe(node))")
            return nil
        }
        guard let value = Int(scalar.string) else {
            error(.wrongType, at: node, "\(what) must be an integer, found \"\(Self.excerpt(scalar.string))\"")
            return nil
        }
        guard range.contains(value) else {
            error(
                .invalidValue, at: node,
                "\(what) must be between \(range.lowerBound) and \(range.upperBound), found \(value)")
            return nil
        }
        return value
    }

    mutating func bool(_ node: Node, _ what: String) -> Bool? {
        if case let .scalar(scalar) = node {
            switch scalar.string.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: break
            }
        }
        error(.wrongType, at: node, "\(what) must be true or false, found \(Self.describe(node))")
        return nil
    }

    mutating func duration(_ node: Node, _ what: String, allowZero: Bool = false) -> Duration? {
        guard let text = string(node, what) else { return nil }
        do {
            let duration = try Duration(parsing: text)
            if !allowZero && duration == .zero {
                error(.badDuration, at: node, "\(what) must be longer than zero")
                return nil
            }
            return duration
        } catch {
            self.error(.badDuration, at: node, "\(what): \(error)")
            return nil
        }
    }

    mutating func size(_ node: Node, _ what: String) -> ByteSize? {
        guard let text = string(node, what) else { return nil }
        do {
            return try ByteSize(parsing: text)
        } catch {
            self.error(.badSize, at: node, "\(what): \(error)")
            return nil
        }
    }

    /// A name usable on a command line, in SQLite and in an environment
    /// variable's value: `[A-Za-z0-9._-]`, 1 to 128 characters, not starting
    /// with `-` or `.`.
    mutating func name(_ node: Node, _ what: String) -> String? {
        guard let text = string(node, what) else { return nil }
        if let problem = Self.nameProblem(text) {
            error(.invalidName, at: node, "\(what) \"\(Self.excerpt(text))\" \(problem)")
            return nil
        }
        return text
    }

    static func nameProblem(_ text: String) -> String? {
        if text.isEmpty { return "is empty" }
        if text.utf8.count > 128 { return "is longer than 128 characters" }
        if text.hasPrefix("-") || text.hasPrefix(".") { return "must not start with '-' or '.'" }
        let allowed = text.utf8.allSatisfy { $0.isASCIILetter || $0.asciiDigit != nil || "._-".utf8.contains($0) }
        return allowed ? nil : "may only use letters, digits, '.', '_' and '-'"
    }

    /// A non-empty list of text, e.g. an argv.
    mutating func stringList(_ node: Node, _ what: String) -> [String]? {
        guard let items = sequence(node, what) else { return nil }
        guard !items.isEmpty else {
            error(.invalidValue, at: node, "\(what) must not be an empty list")
            return nil
        }
        var result: [String] = []
        var ok = true
        for (index, item) in items.enumerated() {
            if let text = string(item, "item \(index) of \(what)") { result.append(text) } else { ok = false }
        }
        return ok ? result : nil
    }

    /// A mapping of text to text, e.g. an environment. Keys must be valid
    /// environment variable names.
    mutating func environment(_ node: Node, _ what: String) -> [String: String]? {
        guard let entries = entries(of: node, what) else { return nil }
        var result: [String: String] = [:]
        var ok = true
        for entry in entries {
            let nameOK =
                !entry.key.isEmpty && !entry.key.utf8.contains(UInt8(ascii: "="))
                && !entry.key.utf8.contains(0) && entry.key.utf8.first?.asciiDigit == nil
            if !nameOK {
                error(
                    .invalidName, at: entry.keyNode,
                    "'\(entry.key)' in \(what) is not a valid environment variable name")
                ok = false
            }
            if let value = string(entry.value, "'\(entry.key)' in \(what)") {
                if value.utf8.contains(0) {
                    error(.invalidValue, at: entry.value, "'\(entry.key)' in \(what) must not contain a NUL byte")
                    ok = false
                }
                result[entry.key] = value
            } else {
                ok = false
            }
        }
        return ok ? result : nil
    }

    // MARK: Describing nodes

    static func isNull(_ node: Node) -> Bool {
        guard case let .scalar(scalar) = node, scalar.style == .plain || scalar.style == .any else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    /// "a list", "a mapping", "nothing (null)" or the scalar's text, for messages.
    static func describe(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case let .scalar(scalar):
            if isNull(node) { return "nothing (null)" }
            return "\"\(excerpt(scalar.string))\""
        }
    }

    /// At most 32 characters of `text` for a message, control and
    /// direction-changing characters written as `\u{…}`: what a file holds
    /// is quoted only as far as a reader needs to find the spot, and never
    /// reaches a terminal or the journal as raw control sequences.
    static func excerpt(_ text: String, limit: Int = 32) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { return result + "…" }
            result += TerminalSafe.escaped(scalar)
            count += 1
        }
        return result
    }

    /// The known word closest to `word` (edit distance at most 2), if any.
    static func nearest(to word: String, among known: [String]) -> String? {
        let limit = Swift.min(2, word.count - 1)
        let scored = known.map { ($0, editDistance(word.lowercased(), $0)) }.filter { $0.1 <= limit }
        return scored.min { $0.1 < $1.1 }?.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = Swift.min(
                    previous[j] + 1, current[j - 1] + 1,
                    previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
