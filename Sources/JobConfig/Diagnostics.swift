/// Where something sits in a source file: a path, a 1-based line and a
/// 1-based column (columns count Unicode scalars, as libyaml does).
///
/// `line == 0` means the problem concerns the whole file (it cannot be read,
/// a folder is missing, …); it then prints as the bare path.
public struct SourcePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var column: Int

    public init(path: String, line: Int, column: Int) {
        self.path = path
        self.line = line
        self.column = column
    }

    /// A position standing for the file as a whole.
    public static func file(_ path: String) -> SourcePosition {
        SourcePosition(path: path, line: 0, column: 0)
    }

    public var description: String {
        line > 0 ? "\(path):\(line):\(column)" : path
    }

    public static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.path, lhs.line, lhs.column) < (rhs.path, rhs.line, rhs.column)
    }
}

/// One problem found in a configuration or definition file.
///
/// Prints compiler-style, `path:line:column: error: message`, so editors and
/// CI logs link straight to the offending key or value.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error
        case warning
    }

    public var severity: Severity
    /// A stable identifier for the kind of problem; tests and tools match on
    /// it, never on the message text.
    public var code: Code
    public var position: SourcePosition
    /// What is wrong and, where it helps, what to write instead.
    public var message: String
    /// For a line that stands for problems not shown (a file's past the
    /// first few): how many errors and warnings it stands for.
    public var notShown = (errors: 0, warnings: 0)

    public init(_ severity: Severity = .error, code: Code, at position: SourcePosition, _ message: String) {
        self.severity = severity
        self.code = code
        self.position = position
        self.message = message
    }

    public var description: String {
        "\(position): \(severity.rawValue): \(message)"
    }

    public static func == (lhs: Diagnostic, rhs: Diagnostic) -> Bool {
        (lhs.severity, lhs.code, lhs.position, lhs.message) == (rhs.severity, rhs.code, rhs.position, rhs.message)
            && lhs.notShown == rhs.notShown
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(severity)
        hasher.combine(code)
        hasher.combine(position)
        hasher.combine(message)
        hasher.combine(notShown.errors)
        hasher.combine(notShown.warnings)
    }
}

extension Diagnostic {
    /// The stable kind of a diagnostic. New codes may be added; existing ones
    /// keep their spelling.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file cannot be read, or is not UTF-8.
        public static let unreadableFile = Code("unreadable-file")
        /// The YAML itself is malformed (syntax, duplicate key, several documents).
        public static let yamlSyntax = Code("yaml-syntax")
        /// A key that this place does not know.
        public static let unknownKey = Code("unknown-key")
        /// A required key is absent.
        public static let missingKey = Code("missing-key")
        /// A value of the wrong YAML type (a list where a string belongs, …).
        public static let wrongType = Code("wrong-type")
        /// A value of the right type but not acceptable (zero concurrency, …).
        public static let invalidValue = Code("invalid-value")
        /// A duration that does not parse.
        public static let badDuration = Code("bad-duration")
        /// A size that does not parse.
        public static let badSize = Code("bad-size")
        /// A name that is empty or uses characters outside `[A-Za-z0-9._-]`.
        public static let invalidName = Code("invalid-name")
        /// A stage with no kind key.
        public static let missingStageKind = Code("missing-stage-kind")
        /// A stage with more than one kind key.
        public static let multipleStageKinds = Code("multiple-stage-kinds")
        /// A stage with no action.
        public static let missingAction = Code("missing-action")
        /// A stage with more than one action.
        public static let multipleActions = Code("multiple-actions")
        /// An action that this stage kind cannot take (`transform` outside
        /// `map`, `all` outside `when`, `any` outside `race`, …).
        public static let actionNotAllowed = Code("action-not-allowed")
        /// A stage kind at a place in the pipeline where the chain cannot have it.
        public static let misplacedStage = Code("misplaced-stage")
        /// A pipeline with no stages.
        public static let emptyPipeline = Code("empty-pipeline")
        /// Two stages of one job with the same name.
        public static let duplicateStageName = Code("duplicate-stage-name")
        /// Two definition files declaring the same job name.
        public static let duplicateJobName = Code("duplicate-job-name")
        /// An `on:` naming a queue that jobd.yaml's `Q` does not declare.
        public static let unknownQueue = Code("unknown-queue")
        /// A `pool:` that jobd.yaml's `pools` does not declare.
        public static let unknownPool = Code("unknown-pool")
        /// A `transform` that is not one of the built-ins, or a bad JSON path.
        public static let badTransform = Code("bad-transform")
        /// A folder that should exist does not.
        public static let missingFolder = Code("missing-folder")
        /// A `schedule:` expression that does not parse, or an unknown time zone.
        public static let badSchedule = Code("bad-schedule")
        /// A warning: a `schedule:` expression with no occurrence after now.
        public static let scheduleNeverFires = Code("schedule-never-fires")
        /// A file's problems past the first few: counted, not listed.
        public static let tooManyProblems = Code("too-many-problems")
        /// Schedules of one definition that are copies of one another.
        public static let duplicateSchedule = Code("duplicate-schedule")
        /// More schedules in one definition than jobd fires.
        public static let tooManySchedules = Code("too-many-schedules")
        /// A `definition:` (child jobs) naming a definition that is not loaded.
        public static let unknownDefinition = Code("unknown-definition")
        /// Child jobs that start children of their own too deep, or in a cycle.
        public static let childrenTooDeep = Code("children-too-deep")
        /// A warning: `$TZ` names no zone jobd can read, and schedules
        /// without `timezone:` are read in `/etc/localtime`'s zone instead.
        public static let unusableTZ = Code("unusable-tz")
    }
}

extension Sequence<Diagnostic> {
    /// Whether any of these is an error (warnings do not stop a load).
    public var containsErrors: Bool { contains { $0.severity == .error } }

    /// How many errors these report, those a line stands for included.
    public var errorCount: Int {
        reduce(0) { count, diagnostic in
            count
                + (diagnostic.code == .tooManyProblems
                    ? diagnostic.notShown.errors : diagnostic.severity == .error ? 1 : 0)
        }
    }

    /// How many warnings these report, those a line stands for included.
    public var warningCount: Int {
        reduce(0) { count, diagnostic in
            count
                + (diagnostic.code == .tooManyProblems
                    ? diagnostic.notShown.warnings : diagnostic.severity == .warning ? 1 : 0)
        }
    }
}

/// Thrown by the throwing loaders: every diagnostic found, in file order.
public struct DiagnosticsError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [Diagnostic]

    public init(_ diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One diagnostic per line, ready for stderr.
    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}

/// A loaded value and what was found wrong while loading it. `value` is nil
/// when any error was found: a half-valid configuration is never handed out.
public struct LoadResult<Value: Sendable>: Sendable {
    public var value: Value?
    public var diagnostics: [Diagnostic]

    public init(value: Value?, diagnostics: [Diagnostic]) {
        self.value = value
        self.diagnostics = diagnostics
    }

    /// The value, or every diagnostic as one error.
    public func get() throws(DiagnosticsError) -> Value {
        guard let value, !diagnostics.containsErrors else { throw DiagnosticsError(diagnostics) }
        return value
    }
}

extension Array where Element == Diagnostic {
    /// Sorts by file, line, column; problems at one position keep the order
    /// in which they were found.
    func sortedByPosition() -> [Diagnostic] {
        enumerated()
            .sorted { ($0.element.position, $0.offset) < ($1.element.position, $1.offset) }
            .map(\.element)
    }
}
