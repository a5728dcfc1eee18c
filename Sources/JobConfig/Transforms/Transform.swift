import JobValues

/// The built-in `map` transforms: pure, in-process functions from bytes to
/// bytes.
///
/// - `trim`: drops Unicode white space (spaces, tabs, newlines, …) at both
///   ends.
/// - `upper`, `lower`: Unicode case mapping (`ß` uppercases to `SS`).
/// - `json(path)`: picks a value out of a JSON document; a string comes out
///   as its raw text (unquoted, unescaped), a number exactly as written in
///   the input, `true`/`false`/`null` as such, an object or array as compact
///   JSON with keys in input order.
///
/// The text transforms require UTF-8 and reject anything else with
/// `TransformError.Code.notUTF8` rather than guess.
public enum Transform: Sendable, Hashable, CustomStringConvertible {
    case trim
    case upper
    case lower
    case json(JSONPath)

    /// The transforms written as a bare word in YAML.
    public static let named: [String: Transform] = ["trim": .trim, "upper": .upper, "lower": .lower]

    public var description: String {
        switch self {
        case .trim: return "trim"
        case .upper: return "upper"
        case .lower: return "lower"
        case let .json(path): return "{json: \(path)}"
        }
    }

    public func apply(_ input: [UInt8]) throws(TransformError) -> [UInt8] {
        switch self {
        case .trim:
            let text = try Self.text(input, for: "trim")
            return Array(text.trimmingWhitespace.utf8)
        case .upper:
            return Array(try Self.text(input, for: "upper").uppercased().utf8)
        case .lower:
            return Array(try Self.text(input, for: "lower").lowercased().utf8)
        case let .json(path):
            let document = try JSONValue.parse(input)
            guard let found = document.value(at: path) else {
                throw TransformError(code: .pathNotFound, message: "json: \(path) not found in the input")
            }
            return found.rawOutput
        }
    }

    private static func text(_ input: [UInt8], for name: String) throws(TransformError) -> String {
        guard let text = String(validating: input, as: UTF8.self) else {
            throw TransformError(code: .notUTF8, message: "\(name): the input is not UTF-8 text")
        }
        return text
    }
}
