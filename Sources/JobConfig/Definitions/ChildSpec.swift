import JobValues

/// What a stage that starts child jobs does (`definition:` in an `each`
/// stage, or in a `then` stage for one child): which definition the
/// children are jobs of, how the stage's value becomes their inputs, and
/// how their outcomes become its value.
public struct ChildSpec: Sendable, Hashable {
    /// How the stage's incoming value is split into the children's inputs.
    public enum Items: Sendable, Hashable, CustomStringConvertible {
        /// One child per line (a last line without a newline counts; empty lines too, but not a final empty one).
        case lines
        /// One child per element of the JSON array at this path; a string
        /// element is the child's input as is, any other its JSON text.
        case json(JSONPath)
        /// One child, whose input is the whole value (`then` with `definition:`).
        case whole

        public var description: String {
            switch self {
            case .lines: "lines"
            case let .json(path): "{json: \(path)}"
            case .whole: "the whole value"
            }
        }
    }

    /// How the children's outcomes settle the stage.
    public enum Settle: String, Sendable, Hashable, CaseIterable {
        /// `when(fulfilled:)`: the first child rejected or cancelled rejects
        /// the stage with its error, and the children still pending or
        /// running are cancelled. The value: the results, in item order.
        case failFast = "fail-fast"
        /// `when(resolved:)`: every child ends, whatever its outcome. The
        /// value: `{"state": …, "result" | "error": …}` per child, in item order.
        case all
    }

    /// The children's definition (checked to exist when definitions load).
    public var definition: String
    public var items: Items
    public var settle: Settle
    /// More items than this reject the stage before any child is created.
    public var maxChildren: Int
    /// Where `definition:` sits, for the check that it exists.
    public var sourcePosition: SourcePosition

    /// `max-children` when none is given.
    public static let defaultMaxChildren = 10_000
    /// How many definitions deep children may start children: a definition
    /// whose children's children … are this many levels down is refused when
    /// definitions load, as is one that reaches itself.
    public static let maxDepth = 4

    public init(
        definition: String, items: Items, settle: Settle, maxChildren: Int = Self.defaultMaxChildren,
        sourcePosition: SourcePosition
    ) {
        self.definition = definition
        self.items = items
        self.settle = settle
        self.maxChildren = maxChildren
        self.sourcePosition = sourcePosition
    }
}

extension ChildSpec {
    /// The children's inputs, in item order, from the stage's value.
    ///
    /// `lines`: the value cut at each newline (the newline dropped; a last
    /// line without one counts; an empty value has no item). `{json: path}`:
    /// the elements of the array at `path` — a string as its text, anything
    /// else as compact JSON. `whole`: the value itself, one item.
    public func inputs(from value: [UInt8]) throws(TransformError) -> [[UInt8]] {
        switch items {
        case .whole:
            return [value]
        case .lines:
            var lines = value.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
            if lines.last?.isEmpty == true { lines.removeLast() }
            return lines
        case let .json(path):
            let document = try JSONValue.parse(value)
            guard let found = document.value(at: path) else {
                throw TransformError(code: .pathNotFound, message: "items: the value has nothing at \(path)")
            }
            guard case let .array(elements) = found else {
                throw TransformError(
                    code: .pathNotFound, message: "items: the value at \(path) is not an array, so it has no items")
            }
            return elements.map(\.rawOutput)
        }
    }
}
