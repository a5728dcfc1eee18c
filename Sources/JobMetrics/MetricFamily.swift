/// One metric family jobd exports: its Prometheus name, kind, label names,
/// help text and (for a histogram) bucket bounds.
///
/// Every family is declared here, so a name, its help text and its buckets
/// cannot disagree between the engine that records and the registry that
/// exports. docs/operations.md lists them for operators.
public struct MetricFamily: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case counter, gauge, histogram
    }

    public let name: String
    public let kind: Kind
    /// Label names, in the order their values are passed.
    public let labels: [String]
    public let help: String
    /// A histogram's bucket upper bounds (`le`), ascending; empty otherwise.
    public let buckets: [Duration]

    init(_ name: String, _ kind: Kind, labels: [String] = [], help: String, buckets: [Duration] = []) {
        self.name = name
        self.kind = kind
        self.labels = labels
        self.help = help
        self.buckets = buckets
    }
}

extension MetricFamily {
    /// `# HELP` and `# TYPE` lines of the family, for an exposition that has
    /// no sample of it yet. (Help texts hold no backslash or newline, which
    /// the format would need escaped.)
    var declaration: String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
    }
}

extension MetricFamily {
    public static let jobsResolved = MetricFamily(
        "jobd_jobs_resolved_total", .counter, labels: ["definition", "state"],
        help: "Jobs resolved (fulfilled, rejected or cancelled), by definition and state.")
    public static let jobsPending = MetricFamily(
        "jobd_jobs_pending", .gauge, labels: ["pool"],
        help: "Jobs waiting in the store to be claimed, by pool (delayed ones included).")
    public static let jobsWaiting = MetricFamily(
        "jobd_jobs_waiting", .gauge, labels: ["reason"],
        help:
            "Pending jobs by why they wait (delayed, paused, a limit, their pool full, ready, ...), counted at each scrape."
    )
    public static let jobsRunning = MetricFamily(
        "jobd_jobs_running", .gauge, labels: ["pool"],
        help: "Jobs this jobd runs now, by pool.")
    public static let stageDuration = MetricFamily(
        "jobd_stage_duration_seconds", .histogram, labels: ["definition", "kind"],
        help: "How long one attempt of a stage took, from its start to its value or error.",
        buckets: stageBuckets)
    public static let stageRetries = MetricFamily(
        "jobd_stage_retries_total", .counter, labels: ["definition"],
        help: "Stage attempts after the first (retries), by definition.")
    public static let pendingPromisesDeallocated = MetricFamily(
        "jobd_pending_promises_deallocated_total", .counter,
        help: "Promises freed while still pending (the finalizer's warnings): a chain that can never resolve.")
    public static let storeCommit = MetricFamily(
        "jobd_store_commit_seconds", .histogram,
        help: "How long one group-commit transaction of the store took.",
        buckets: commitBuckets)
    public static let processesStarted = MetricFamily(
        "jobd_processes_started_total", .counter,
        help: "Child processes started for run: and shell: actions.")
    public static let processesFailedToStart = MetricFamily(
        "jobd_processes_failed_to_start_total", .counter,
        help: "Child processes that could not be started (no such program, permission denied, out of resources).")
    public static let scheduleOccurrences = MetricFamily(
        "jobd_schedule_occurrences_total", .counter, labels: ["definition", "outcome"],
        help: "Schedule occurrences, by definition and outcome: fired (a job was submitted) or skipped.")
    public static let clockSkew = MetricFamily(
        "jobd_clock_skew_seconds", .gauge,
        help:
            "This host's wall clock minus the database's, at the last reading (positive: ahead). jobd decides by the database's clock."
    )
    public static let buildInfo = MetricFamily(
        "jobd_build_info", .gauge, labels: ["version"],
        help: "Always 1; its version label names the running jobd's version.")

    /// Every family, in the order docs/operations.md lists them.
    public static let all: [MetricFamily] = [
        jobsResolved, jobsPending, jobsWaiting, jobsRunning, stageDuration, stageRetries, pendingPromisesDeallocated,
        storeCommit, processesStarted, processesFailedToStart, scheduleOccurrences, clockSkew, buildInfo,
    ]

    /// 1 ms … 1 h: a stage is a transform (under a millisecond) or a process
    /// (milliseconds to hours). Roughly 1-2.5-5 per decade, then minutes.
    static let stageBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .microseconds(2_500_000), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(120),
        .seconds(300), .seconds(600), .seconds(1800), .seconds(3600),
    ]

    /// 100 µs … 10 s: a WAL commit with synchronous=NORMAL takes tens of
    /// microseconds; one that waits for another process's write lock, up to
    /// the busy timeout (10 s by default).
    static let commitBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2_500),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .microseconds(2_500_000), .seconds(5), .seconds(10),
    ]
}
