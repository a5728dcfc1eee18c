/// A schedule expression that does not parse: which field, where, and why.
///
/// `column` is the 0-based offset, in Unicode scalars, of the offending text
/// within ``expression`` — add it to the column where the expression starts
/// in a YAML file to point at the very character. ``description`` is a
/// complete one-line message for a user; ``message`` is the same without
/// the expression, for diagnostics that already show where it is.
public struct ScheduleParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Nothing was written.
        public static let empty = Code("empty")
        /// Text that does not fit the grammar.
        public static let syntax = Code("syntax")
        /// A number outside its field's range, or a range or step that can never fire.
        public static let outOfRange = Code("out-of-range")
        /// A month or weekday name, or a shorthand, that is not known.
        public static let unknownName = Code("unknown-name")
        /// A time zone that is not in the system tz database.
        public static let unknownTimeZone = Code("unknown-time-zone")
        /// Valid elsewhere (in croniter, Quartz, or systemd), but not here.
        public static let unsupported = Code("unsupported")
    }

    public var code: Code
    public var kind: ScheduleKind
    /// The expression as given.
    public var expression: String
    /// The field at fault: `minute`, `day-of-week`, `year`, `time zone`, `duration`, …
    public var field: String
    /// 0-based offset of the fault in `expression`, in Unicode scalars.
    public var column: Int
    /// What is wrong and, where it helps, what to write instead.
    public var reason: String

    public init(code: Code, kind: ScheduleKind, expression: String, field: String, column: Int, reason: String) {
        self.code = code
        self.kind = kind
        self.expression = expression
        self.field = field
        self.column = column
        self.reason = reason
    }

    /// `minute: 61 is out of range 0–59` — the field and the reason.
    public var message: String { "\(field): \(reason)" }

    /// `invalid cron expression "61 * * * *": minute at column 1: 61 is out of range 0–59`
    /// (the column counted from 1 here, as editors count).
    public var description: String {
        "invalid \(kind.rawValue) expression \"\(expression)\": \(field) at column \(column + 1): \(reason)"
    }
}

extension ScheduleParseError {
    /// An error at UTF-8 offset `offset` of `expression`, converted to a
    /// Unicode scalar offset.
    init(
        _ code: Code, _ kind: ScheduleKind, _ expression: String, field: String, utf8Offset offset: Int,
        _ reason: String
    ) {
        var scalars = 0
        var bytes = 0
        for scalar in expression.unicodeScalars {
            if bytes >= offset { break }
            bytes += UTF8.width(scalar)
            scalars += 1
        }
        self.init(code: code, kind: kind, expression: expression, field: field, column: scalars, reason: reason)
    }
}
