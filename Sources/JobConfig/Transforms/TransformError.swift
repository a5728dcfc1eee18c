/// Why a built-in transform rejected its input (or why a transform written
/// in a definition is not one).
public struct TransformError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A text transform got bytes that are not UTF-8.
        public static let notUTF8 = Code("not-utf8")
        /// `json` got input that is not one JSON value.
        public static let invalidJSON = Code("invalid-json")
        /// `json`'s path names nothing in the input.
        public static let pathNotFound = Code("path-not-found")
        /// A JSON path that does not parse.
        public static let invalidPath = Code("invalid-path")
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
