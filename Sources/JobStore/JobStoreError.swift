/// An error from a job store: a stable ``Code`` to match on, and a message
/// that says what failed and what to do about it.
///
/// Match on the code, never on the message:
///
/// ```swift
/// catch let error as JobStoreError where error.code == .valueTooLarge { … }
/// ```
public struct JobStoreError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier of the kind of failure. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case valueTooLarge = "value-too-large"
            case jobNotFound = "job-not-found"
            case invalidState = "invalid-state"
            case invalidArgument = "invalid-argument"
            case leaseLost = "lease-lost"
            case permissionDenied = "permission-denied"
            case cannotOpen = "cannot-open"
            case busy = "busy"
            case diskFull = "disk-full"
            case corrupt = "corrupt"
            case schemaTooNew = "schema-too-new"
            case io = "io"
            case closed = "closed"
            case database = "database"
            case databaseMissing = "database-missing"
            case databaseReplaced = "database-replaced"
            case unavailable = "unavailable"
            case badRow = "bad-row"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A value (input, stage value, result, error text) is bigger than the configured cap.
        public static let valueTooLarge = Code(.valueTooLarge)
        /// No job has this id (it may have been pruned).
        public static let jobNotFound = Code(.jobNotFound)
        /// The job is not in a state that allows the operation (retrying a running job…).
        public static let invalidState = Code(.invalidState)
        /// An argument is out of range (an empty definition name, a negative limit…).
        public static let invalidArgument = Code(.invalidArgument)
        /// The lease is no longer the job's: it expired and the job was requeued or claimed again.
        public static let leaseLost = Code(.leaseLost)
        /// The database, its folder, or its `-wal`/`-shm` files cannot be opened or written by this user.
        public static let permissionDenied = Code(.permissionDenied)
        /// The database cannot be opened for another reason than permissions (its folder is missing…).
        public static let cannotOpen = Code(.cannotOpen)
        /// Another process held the write lock for longer than the busy timeout.
        public static let busy = Code(.busy)
        /// The disk (or the database's size limit) is full.
        public static let diskFull = Code(.diskFull)
        /// The file is not a database, or is damaged.
        public static let corrupt = Code(.corrupt)
        /// The database was upgraded by a newer version of jobd.
        public static let schemaTooNew = Code(.schemaTooNew)
        /// The operating system failed a read or a write.
        public static let io = Code(.io)
        /// The store was closed.
        public static let closed = Code(.closed)
        /// Any other database failure.
        public static let database = Code(.database)
        /// The database does not exist, and the store was told not to create it.
        public static let databaseMissing = Code(.databaseMissing)
        /// The database's path (or its `-wal` file) no longer names the file
        /// the store has open: it was removed or replaced under it.
        public static let databaseReplaced = Code(.databaseReplaced)
        /// The database server cannot be reached now (it is restarting, the
        /// connection dropped, the network is down): nothing was written, or
        /// — when the connection dropped during a commit — the write may have
        /// been committed. Retryable: try again after a pause; the store
        /// reconnects by itself.
        public static let unavailable = Code(.unavailable)
        /// A row holds what jobd cannot read (text where it reads an
        /// integer, a BLOB where it reads text, NULL, an unknown state): it
        /// was written by hand. The message names the table, the row and
        /// the column. Not retryable: the row stays as it is until someone
        /// corrects or deletes it.
        public static let badRow = Code(.badRow)

        /// Failures that may go away by themselves: try again later.
        public var isRetryable: Bool { self == .unavailable || self == .busy }

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// What failed, where, and what to do.
    public let message: String
    /// The job concerned, if any.
    public let jobID: Int64?
    /// The error this one was made from (an SQLite error, an errno…), if any.
    public let underlying: (any Error)?
    /// For ``Code/leaseLost``: the lease was not lost — the job was resolved
    /// under this very claim, and this write (a retry of a stage's start
    /// or result after a dropped connection) arrived after the job's end.
    /// Nothing was lost and nobody else runs the job.
    public internal(set) var cameAfterOwnEnd = false
    /// Where in jobd's source the error was made.
    public let file: String
    public let line: Int

    public init(
        _ code: Code, _ message: String, jobID: Int64? = nil, underlying: (any Error)? = nil,
        file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.jobID = jobID
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    public var description: String { "\(message) [\(code)]" }
}
