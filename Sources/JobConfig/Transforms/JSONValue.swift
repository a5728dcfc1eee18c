/// A parsed JSON document that keeps what a round trip must not change:
/// numbers as their exact text (`42` stays `42`, `1.50` stays `1.50`) and
/// object members in input order.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// An object whose members are `pairs`, in order.
    public static func fields(_ pairs: [(String, JSONValue)]) -> JSONValue {
        .object(pairs.map { Member(key: $0.0, value: $0.1) })
    }

    public static func int(_ value: Int64) -> JSONValue { .number(String(value)) }

    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// `.string`, or `.null` for nil.
    public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    public static func optional(_ number: Int64?) -> JSONValue { number.map { .int($0) } ?? .null }

    /// Deeper documents are refused rather than risk the stack.
    static let maximumDepth = 512

    /// Parses one JSON value (RFC 8259) surrounded by optional white space.
    public static func parse(_ bytes: [UInt8]) throws(TransformError) -> JSONValue {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw TransformError(code: .notUTF8, message: "json: the input is not UTF-8 text")
        }
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.peek != nil else {
            throw TransformError(code: .invalidJSON, message: "json: the input is empty, expected a JSON document")
        }
        do throws(JSONSyntaxError) {
            let value = try scanner.parseValue(depth: 0)
            scanner.skipWhitespace()
            guard scanner.peek == nil else { throw scanner.error("unexpected data after the JSON value") }
            return value
        } catch {
            throw TransformError(code: .invalidJSON, message: "json: the input is not valid JSON: \(error.message)")
        }
    }

    /// The value at `path`, if there is one.
    func value(at path: JSONPath) -> JSONValue? {
        var current = self
        for component in path.components {
            switch (component, current) {
            case let (.key(key), .object(members)):
                guard let member = members.last(where: { $0.key == key }) else { return nil }
                current = member.value
            case let (.index(index), .array(elements)):
                let resolved = index < 0 ? elements.count + index : index
                guard elements.indices.contains(resolved) else { return nil }
                current = elements[resolved]
            default:
                return nil
            }
        }
        return current
    }

    /// What the `json` transform outputs: a string's raw text, anything else
    /// as compact JSON.
    public var rawOutput: [UInt8] {
        if case let .string(text) = self { return Array(text.utf8) }
        return compactJSON
    }

    public var compactJSON: [UInt8] {
        var out: [UInt8] = []
        write(to: &out, indent: nil)
        return out
    }

    /// Two-space indented, one member or element a line, ending with a
    /// newline: how jobctl prints JSON.
    public var pretty: String {
        var out: [UInt8] = []
        write(to: &out, indent: 0)
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Compact when `indent` is nil, else indented by `indent` levels.
    private func write(to out: inout [UInt8], indent: Int?) {
        func newline(_ level: Int) {
            out.append(UInt8(ascii: "\n"))
            out += [UInt8](repeating: UInt8(ascii: " "), count: 2 * level)
        }
        switch self {
        case .null: out += "null".utf8
        case let .bool(value): out += (value ? "true" : "false").utf8
        case let .number(text): out += text.utf8
        case let .string(text): Self.writeString(text, to: &out)
        case let .array(elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if let indent { newline(indent + 1) }
                element.write(to: &out, indent: indent.map { $0 + 1 })
            }
            if let indent, !elements.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "]"))
        case let .object(members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if let indent { newline(indent + 1) }
                Self.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                member.value.write(to: &out, indent: indent.map { $0 + 1 })
            }
            if let indent, !members.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            case 0x08: out += #"\b"#.utf8
            case 0x0C: out += #"\f"#.utf8
            case 0..<0x20:
                out += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                ]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
