import CoreMetrics
public import Prometheus
import Synchronization

/// jobd's metrics with a Prometheus registry behind them: the ``JobMetrics``
/// to hand the engine, and the exposition to serve on `GET /metrics` and
/// through the control socket (`jobctl metrics`).
///
/// ```swift
/// let prometheus = PrometheusJobMetrics.bootstrapProcess(version: "1.4.0")   // jobd's main, once
/// let engine = Engine(…, metrics: prometheus.metrics)
/// let text = prometheus.exposition()                                         // text format 0.0.4
/// ```
///
/// Tests make their own with ``init(version:)``: a fresh registry each,
/// nothing global touched.
public struct PrometheusJobMetrics: Sendable {
    /// The `Content-Type` of ``exposition()``: Prometheus text format 0.0.4.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public let registry: PrometheusCollectorRegistry
    public let factory: JobdPrometheusFactory
    public let metrics: JobMetrics

    /// A fresh registry and the metrics recorded into it; `MetricsSystem` is left alone.
    public init(version: String) {
        registry = PrometheusCollectorRegistry()
        factory = JobdPrometheusFactory(registry: registry)
        metrics = JobMetrics(factory: factory, version: version)
    }

    /// The metrics in Prometheus text exposition format, jobd's families
    /// first in a fixed order. Every family of ``MetricFamily/all`` is
    /// declared (`# HELP`, `# TYPE`), also one without a sample yet — a
    /// labelled family gets its first series with its first event
    /// (`jobd_schedule_occurrences_total` before any schedule fired) — so an
    /// operator sees every name jobd can export.
    public func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return ExpositionText.arrange(buffer)
    }

    private static let bootstrapped = Mutex<PrometheusJobMetrics?>(nil)

    /// Makes the process's metrics once: a registry, and
    /// `MetricsSystem.bootstrap` with a factory over it, so that libraries
    /// which record through swift-metrics' global factory land in the same
    /// exposition. Later calls return the first one (swift-metrics allows one
    /// bootstrap per process); their `version` is ignored.
    public static func bootstrapProcess(version: String) -> PrometheusJobMetrics {
        bootstrapped.withLock { existing in
            if let existing { return existing }
            let made = PrometheusJobMetrics(version: version)
            MetricsSystem.bootstrap(made.factory)
            existing = made
            return made
        }
    }
}
