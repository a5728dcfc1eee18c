import JobValues

/// The path language of the `json` transform, a small subset of jq's:
///
/// - `.`: the whole document;
/// - `.key`: a member of an object; bare keys use `[A-Za-z0-9_-]`;
/// - `."any key"` or `["any key"]`: a member whose name needs quoting (JSON
///   string syntax, escapes included);
/// - `[N]`: an element of an array, 0-based; `[-1]` is the last;
/// - chains of these: `.items[0].name`, `.[2]`, `.a."b c"[1]`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(components: [Component]) {
        self.components = components
    }

    public init(parsing text: String) throws(TransformError) {
        var scanner = JSONScanner(Array(text.utf8))
        func fail(_ reason: String) -> TransformError {
            TransformError(
                code: .invalidPath,
                message: "invalid JSON path '\(text)': \(reason); write e.g. '.', '.total', '.items[0].name'")
        }
        guard scanner.take(UInt8(ascii: ".")) else { throw fail("it must start with '.'") }
        var components: [Component] = []
        var afterDot = true
        while let byte = scanner.peek {
            if byte == UInt8(ascii: "[") {
                scanner.advance()
                if scanner.peek == UInt8(ascii: "\"") {
                    guard let key = try? scanner.parseString() else {
                        throw fail("a quoted key is not a valid JSON string")
                    }
                    components.append(.key(key))
                } else {
                    guard let index = scanner.parseInteger() else { throw fail("expected an index like [0] or [-1]") }
                    components.append(.index(index))
                }
                guard scanner.take(UInt8(ascii: "]")) else { throw fail("expected ']'") }
                afterDot = false
            } else if afterDot {
                if byte == UInt8(ascii: "\"") {
                    guard let key = try? scanner.parseString() else {
                        throw fail("a quoted key is not a valid JSON string")
                    }
                    components.append(.key(key))
                } else {
                    let key = scanner.takeWhile {
                        $0.isASCIILetter || $0.asciiDigit != nil || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
                    }
                    guard !key.isEmpty else {
                        throw fail("expected a key after '.' (quote it if it has other characters)")
                    }
                    components.append(.key(String(decoding: key, as: UTF8.self)))
                }
                afterDot = false
            } else if byte == UInt8(ascii: ".") {
                scanner.advance()
                afterDot = true
                guard scanner.peek != nil else { throw fail("it ends with '.'") }
            } else {
                throw fail("unexpected '\(String(decoding: [byte], as: UTF8.self))'")
            }
        }
        self.components = components
    }

    public var description: String {
        guard !components.isEmpty else { return "." }
        let text = components.map { component in
            switch component {
            case let .index(index):
                return "[\(index)]"
            case let .key(key):
                let bare =
                    !key.isEmpty
                    && key.utf8.allSatisfy {
                        $0.isASCIILetter || $0.asciiDigit != nil || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
                    }
                return bare ? ".\(key)" : "." + String(decoding: JSONValue.string(key).compactJSON, as: UTF8.self)
            }
        }.joined()
        return text.hasPrefix("[") ? "." + text : text
    }
}
