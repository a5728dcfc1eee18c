public import CoreMetrics
import JobValues
import Synchronization

/// What jobd measures, one call per event: the engine calls these where the
/// events happen (docs/dashboard.md lists the call sites).
///
/// Built over any swift-metrics `MetricsFactory`, never the global
/// `MetricsSystem`: the daemon passes ``PrometheusJobMetrics/metrics`` (a
/// Prometheus registry behind it); a test passes its own registry's, so tests
/// running in parallel never share counters; ``disabled`` records nothing.
///
/// Handles are made once per label set and kept, so a call costs a
/// dictionary look-up under a lock and an atomic add. Label values are the
/// names of definitions and pools: few, fixed by the configuration.
public final class JobMetrics: Sendable {
    /// How a schedule occurrence ended.
    public enum ScheduleOutcome: String, Sendable {
        /// A job was submitted for it.
        case fired
        /// None was (overlap: skip, catch-up: none or latest, …).
        case skipped
    }

    private let resolved: HandleCache<Counter>
    private let pending: HandleCache<Gauge>
    private let waiting: HandleCache<Gauge>
    private let running: HandleCache<Gauge>
    private let stageDurations: HandleCache<Timer>
    private let retries: HandleCache<Counter>
    private let occurrences: HandleCache<Counter>
    private let promisesDeallocated: Counter
    private let commits: Timer
    private let processesStarted: Counter
    private let processesFailed: Counter
    private let build: Gauge
    private let skew: Gauge

    /// - Parameter version: jobd's version, the `version` label of `jobd_build_info`.
    public init(factory: any MetricsFactory, version: String) {
        resolved = HandleCache { Counter(label: MetricFamily.jobsResolved.name, dimensions: $0, factory: factory) }
        pending = HandleCache { Gauge(label: MetricFamily.jobsPending.name, dimensions: $0, factory: factory) }
        waiting = HandleCache { Gauge(label: MetricFamily.jobsWaiting.name, dimensions: $0, factory: factory) }
        running = HandleCache { Gauge(label: MetricFamily.jobsRunning.name, dimensions: $0, factory: factory) }
        stageDurations = HandleCache { Timer(label: MetricFamily.stageDuration.name, dimensions: $0, factory: factory) }
        retries = HandleCache { Counter(label: MetricFamily.stageRetries.name, dimensions: $0, factory: factory) }
        occurrences = HandleCache {
            Counter(label: MetricFamily.scheduleOccurrences.name, dimensions: $0, factory: factory)
        }
        // Families without labels exist from the start, so they read 0
        // rather than being absent until their first event.
        promisesDeallocated = Counter(label: MetricFamily.pendingPromisesDeallocated.name, factory: factory)
        commits = Timer(label: MetricFamily.storeCommit.name, factory: factory)
        processesStarted = Counter(label: MetricFamily.processesStarted.name, factory: factory)
        processesFailed = Counter(label: MetricFamily.processesFailedToStart.name, factory: factory)
        skew = Gauge(label: MetricFamily.clockSkew.name, factory: factory)
        build = Gauge(label: MetricFamily.buildInfo.name, dimensions: [("version", version)], factory: factory)
        build.record(1)
    }

    /// Records nothing: for an engine run without metrics.
    public static let disabled = JobMetrics(factory: NOOPMetricsHandler.instance, version: "")

    // MARK: Jobs

    /// A job was resolved: fulfilled, rejected or cancelled. `state` is a
    /// `JobState` (any string-backed value: this module does not link the store).
    public func jobResolved<State: RawRepresentable<String>>(definition: String, state: State) {
        resolved.handle([("definition", definition), ("state", state.rawValue)]).increment()
    }

    /// The number of pending jobs of `pool`, as last counted.
    public func setJobsPending(pool: String, _ count: Int) {
        pending.handle([("pool", pool)]).record(count)
    }

    /// The pending jobs of every pool, as just counted: each pool in
    /// `counts` gets its count, and a pool reported before but absent now
    /// (its last pending job was claimed) reads 0 rather than its old count.
    public func setJobsPending(byPool counts: [String: Int]) {
        for (pool, count) in counts { setJobsPending(pool: pool, count) }
        for (labels, gauge) in pending.all() where counts[labels[0]] == nil {
            gauge.record(0)
        }
    }

    /// The pending jobs by why they wait, as just counted: every reason
    /// gets its count, 0 when none waits for it. `Reason` is the store's
    /// `WaitReason.Code` (this module does not link the store).
    public func setJobsWaiting<Reason: RawRepresentable<String> & CaseIterable & Hashable>(
        byReason counts: [Reason: Int]
    ) {
        for reason in Reason.allCases {
            waiting.handle([("reason", reason.rawValue)]).record(counts[reason] ?? 0)
        }
    }

    /// The number of jobs of `pool` this jobd runs now.
    public func setJobsRunning(pool: String, _ count: Int) {
        running.handle([("pool", pool)]).record(count)
    }

    // MARK: Stages

    /// One attempt of a stage ended (with a value, an error or a timeout),
    /// `duration` after it started. `kind` is the stage's kind key (`then`, `map`, …).
    public func stageAttemptFinished(definition: String, kind: String, duration: Duration) {
        stageDurations.handle([("definition", definition), ("kind", kind)]).recordNanoseconds(duration.nanoseconds)
    }

    /// A stage is about to be tried again (its attempt 2, 3, …).
    public func stageRetried(definition: String) {
        retries.handle([("definition", definition)]).increment()
    }

    // MARK: Engine, store, processes, schedules

    /// The finalizer reported a promise freed while still pending.
    public func pendingPromiseDeallocated() {
        promisesDeallocated.increment()
    }

    /// One store transaction committed (or failed) after `duration`.
    public func storeCommitted(duration: Duration) {
        commits.recordNanoseconds(duration.nanoseconds)
    }

    /// A child process was started.
    public func processStarted() {
        processesStarted.increment()
    }

    /// A child process could not be started (spawn failed).
    public func processFailedToStart() {
        processesFailed.increment()
    }

    /// This host's wall clock minus the database's, in seconds, as just read.
    public func setClockSkew(seconds: Double) {
        skew.record(seconds)
    }

    /// A schedule occurrence came due and was fired or skipped.
    public func scheduleOccurrence(definition: String, outcome: ScheduleOutcome) {
        occurrences.handle([("definition", definition), ("outcome", outcome.rawValue)]).increment()
    }
}

/// swift-metrics handles of one family, one per label set, made on first use.
private final class HandleCache<Handle: Sendable>: Sendable {
    private let make: @Sendable ([(String, String)]) -> Handle
    private let handles = Mutex<[[String]: Handle]>([:])

    init(_ make: @escaping @Sendable ([(String, String)]) -> Handle) {
        self.make = make
    }

    /// Every handle made so far, with its label values.
    func all() -> [([String], Handle)] {
        handles.withLock { $0.map { ($0.key, $0.value) } }
    }

    func handle(_ labels: [(String, String)]) -> Handle {
        let key = labels.map(\.1)
        return handles.withLock { handles in
            if let handle = handles[key] { return handle }
            let handle = make(labels)
            handles[key] = handle
            return handle
        }
    }
}
