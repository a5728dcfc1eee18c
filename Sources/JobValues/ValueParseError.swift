/// A duration or size written on a command line or in a YAML file that does
/// not parse. `description` is a complete one-line message for a user.
public struct ValueParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Nothing was written.
        public static let empty = Code("empty")
        /// A number with no unit (`30` rather than `30s`).
        public static let missingUnit = Code("missing-unit")
        /// A unit that is not known.
        public static let unknownUnit = Code("unknown-unit")
        /// A minus sign: durations and sizes are never negative.
        public static let negative = Code("negative")
        /// Too large to represent.
        public static let overflow = Code("overflow")
        /// Anything else that does not fit the grammar.
        public static let malformed = Code("malformed")
    }

    public var code: Code
    /// What kind of value was being read: "duration" or "size".
    public var kind: String
    /// The text as given.
    public var input: String
    /// What is wrong and what to write instead.
    public var reason: String

    public init(code: Code, kind: String, input: String, reason: String) {
        self.code = code
        self.kind = kind
        self.input = input
        self.reason = reason
    }

    public var description: String {
        "invalid \(kind) \"\(input)\": \(reason)"
    }
}
