import JobConfig

/// A JSON document as jobctl prints it (`pretty`): object members in the
/// order they were given (the order docs/jobctl.md shows), numbers exact,
/// `null` written out rather than left out. The same type the `json`
/// transform reads and writes.
typealias JSON = JSONValue
