public import CoreMetrics
public import Prometheus

/// A swift-metrics factory that creates its metrics in a
/// `PrometheusCollectorRegistry`, giving jobd's families (``MetricFamily``)
/// their help text and bucket bounds.
///
/// swift-prometheus's own `PrometheusMetricsFactory` registers every metric
/// without help text, and with one set of duration buckets for all timers;
/// this one looks the label up in ``MetricFamily/all`` first. Metrics of
/// other names (a library's, once ``PrometheusJobMetrics/bootstrapProcess(version:)``
/// made this the process's factory) get `PrometheusMetricsFactory`'s defaults.
public struct JobdPrometheusFactory: MetricsFactory {
    public let registry: PrometheusCollectorRegistry
    private let fallback: PrometheusMetricsFactory
    private let families: [String: MetricFamily]

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.fallback = PrometheusMetricsFactory(registry: registry)
        self.families = Dictionary(uniqueKeysWithValues: MetricFamily.all.map { ($0.name, $0) })
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let family = families[label] else { return fallback.makeCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(descriptor: family.descriptor, labels: dimensions)
    }

    public func makeFloatingPointCounter(
        label: String, dimensions: [(String, String)]
    ) -> any FloatingPointCounterHandler {
        guard let family = families[label] else {
            return fallback.makeFloatingPointCounter(label: label, dimensions: dimensions)
        }
        return registry.makeCounter(descriptor: family.descriptor, labels: dimensions)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let family = families[label] else { return fallback.makeMeter(label: label, dimensions: dimensions) }
        return registry.makeGauge(descriptor: family.descriptor, labels: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard let family = families[label], family.kind == .gauge else {
            return fallback.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
        }
        return registry.makeGauge(descriptor: family.descriptor, labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard let family = families[label], family.kind == .histogram else {
            return fallback.makeTimer(label: label, dimensions: dimensions)
        }
        return registry.makeDurationHistogram(
            descriptor: family.descriptor, labels: dimensions, buckets: family.buckets)
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        fallback.destroyCounter(handler)
    }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        fallback.destroyFloatingPointCounter(handler)
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        fallback.destroyMeter(handler)
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        fallback.destroyRecorder(handler)
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        fallback.destroyTimer(handler)
    }
}

extension MetricFamily {
    var descriptor: MetricNameDescriptor {
        // The whole name is in metricName; an empty unit adds nothing to it.
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
