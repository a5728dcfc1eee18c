import CoreMetrics
import Foundation
import JobMetrics
import TestSupport
import Testing

/// The exposition, read back by prometheus_client's parser (the reference
/// Python client's; it raises on a line it cannot read) in the test
/// virtualenv that `make test` makes.
@Suite struct ExpositionTests {
    enum Resolution: String { case fulfilled, rejected }

    @Test func parsesWithPrometheusClientAndHoldsWhatWasRecorded() async throws {
        let prometheus = PrometheusJobMetrics(version: "1.2.3-test")
        let metrics = prometheus.metrics
        for _ in 0..<3 { metrics.jobResolved(definition: "report", state: Resolution.fulfilled) }
        metrics.jobResolved(definition: "report", state: Resolution.rejected)
        // A hostile definition name: quotes, a backslash, a newline, non-ASCII.
        let hostile = "we\"ird\\name\nß→"
        metrics.jobResolved(definition: hostile, state: Resolution.rejected)
        metrics.setJobsPending(pool: "default", 7)
        metrics.setJobsRunning(pool: "default", 2)
        metrics.stageAttemptFinished(definition: "report", kind: "then", duration: .microseconds(700))
        metrics.stageAttemptFinished(definition: "report", kind: "then", duration: .seconds(3))
        metrics.stageAttemptFinished(definition: "report", kind: "then", duration: .seconds(7200))
        metrics.stageRetried(definition: "report")
        metrics.pendingPromiseDeallocated()
        metrics.storeCommitted(duration: .microseconds(40))
        metrics.processStarted()
        metrics.processStarted()
        metrics.processFailedToStart()
        metrics.scheduleOccurrence(definition: "report", outcome: .fired)
        metrics.scheduleOccurrence(definition: "report", outcome: .skipped)

        let families = try await PrometheusClientParser.parse(prometheus.exposition())

        // Every family jobd declares is there, with its type and help text.
        for declared in MetricFamily.all {
            // prometheus_client names a counter's family without `_total`.
            let name = declared.kind == .counter ? String(declared.name.dropLast("_total".count)) : declared.name
            let family = try #require(families[name], "\(declared.name) is missing from the exposition")
            #expect(family.type == declared.kind.rawValue, "\(declared.name)")
            #expect(family.help == declared.help, "\(declared.name)")
        }
        #expect(families.value("jobd_jobs_resolved_total", ["definition": "report", "state": "fulfilled"]) == 3)
        #expect(families.value("jobd_jobs_resolved_total", ["definition": "report", "state": "rejected"]) == 1)
        #expect(families.value("jobd_jobs_resolved_total", ["definition": hostile, "state": "rejected"]) == 1)
        #expect(families.value("jobd_jobs_pending", ["pool": "default"]) == 7)
        #expect(families.value("jobd_jobs_running", ["pool": "default"]) == 2)
        let then = ["definition": "report", "kind": "then"]
        #expect(families.value("jobd_stage_duration_seconds_count", then) == 3)
        #expect(families.value("jobd_stage_duration_seconds_sum", then) == 7203.0007)
        #expect(families.value("jobd_stage_duration_seconds_bucket", then.merging(["le": "0.001"]) { $1 }) == 1)
        #expect(families.value("jobd_stage_duration_seconds_bucket", then.merging(["le": "5.0"]) { $1 }) == 2)
        #expect(families.value("jobd_stage_duration_seconds_bucket", then.merging(["le": "3600.0"]) { $1 }) == 2)
        #expect(families.value("jobd_stage_duration_seconds_bucket", then.merging(["le": "+Inf"]) { $1 }) == 3)
        #expect(families.value("jobd_stage_retries_total", ["definition": "report"]) == 1)
        #expect(families.value("jobd_pending_promises_deallocated_total") == 1)
        #expect(families.value("jobd_store_commit_seconds_count") == 1)
        #expect(families.value("jobd_store_commit_seconds_bucket", ["le": "0.0001"]) == 1)
        #expect(families.value("jobd_processes_started_total") == 2)
        #expect(families.value("jobd_processes_failed_to_start_total") == 1)
        #expect(families.value("jobd_schedule_occurrences_total", ["definition": "report", "outcome": "fired"]) == 1)
        #expect(families.value("jobd_schedule_occurrences_total", ["definition": "report", "outcome": "skipped"]) == 1)
        #expect(families.value("jobd_build_info", ["version": "1.2.3-test"]) == 1)
    }

    @Test func everyFamilyIsDeclaredBeforeItsFirstSample() async throws {
        let prometheus = PrometheusJobMetrics(version: "fresh")
        let families = try await PrometheusClientParser.parse(prometheus.exposition())
        for declared in MetricFamily.all {
            let name = declared.kind == .counter ? String(declared.name.dropLast("_total".count)) : declared.name
            let family = try #require(families[name], "\(declared.name) is not declared")
            #expect(family.type == declared.kind.rawValue && family.help == declared.help, "\(declared.name)")
        }
        // Labelled families have no series until their first event.
        #expect(families["jobd_schedule_occurrences"]?.samples.isEmpty == true)
        #expect(families["jobd_jobs_resolved"]?.samples.isEmpty == true)
        // Once a family has a series, the registry declares it, and only once.
        prometheus.metrics.scheduleOccurrence(definition: "nightly", outcome: .skipped)
        let text = String(decoding: prometheus.exposition(), as: UTF8.self)
        #expect(text.occurrences(of: "# TYPE jobd_schedule_occurrences_total counter") == 1)
        let again = try await PrometheusClientParser.parse(Array(text.utf8))
        #expect(again["jobd_schedule_occurrences"]?.samples.count == 1)
    }

    @Test func familiesComeInTheOrderTheyAreListed() {
        let prometheus = PrometheusJobMetrics(version: "t")
        // Series in an order of their own: the exposition's order does not follow it.
        prometheus.metrics.scheduleOccurrence(definition: "z", outcome: .fired)
        prometheus.metrics.stageRetried(definition: "a")
        prometheus.metrics.jobResolved(definition: "b", state: Resolution.fulfilled)
        let text = String(decoding: prometheus.exposition(), as: UTF8.self)
        let declared = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map {
            $0.split(separator: " ")[2]
        }
        #expect(declared.map(String.init) == MetricFamily.all.map(\.name))
        // Each family's HELP, TYPE and samples stay together.
        #expect(
            text.contains(
                """
                # HELP jobd_stage_retries_total \(MetricFamily.stageRetries.help)
                # TYPE jobd_stage_retries_total counter
                jobd_stage_retries_total{definition="a"} 1
                """))
    }

    @Test func aPoolWhosePendingJobsAreGoneReadsZero() async throws {
        let prometheus = PrometheusJobMetrics(version: "t")
        prometheus.metrics.setJobsPending(byPool: ["default": 3, "slow": 2])
        prometheus.metrics.setJobsPending(byPool: ["default": 1])
        let families = try await PrometheusClientParser.parse(prometheus.exposition())
        let samples = try #require(families["jobd_jobs_pending"]).samples
        #expect(
            Dictionary(uniqueKeysWithValues: samples.map { ($0.labels["pool"] ?? "", $0.value) }) == [
                "default": 1, "slow": 0,
            ])
    }

    @Test func histogramBucketsRunFromOneMillisecondToOneHour() {
        let bounds = MetricFamily.stageDuration.buckets
        #expect(bounds.first == .milliseconds(1))
        #expect(bounds.last == .seconds(3600))
        #expect(bounds == bounds.sorted())
        #expect(MetricFamily.storeCommit.buckets == MetricFamily.storeCommit.buckets.sorted())
    }

    @Test func namesFollowPrometheusConventions() {
        for family in MetricFamily.all {
            #expect(family.name.hasPrefix("jobd_"))
            #expect(family.name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
            // Counters end in _total, histograms of time in _seconds, gauges in neither.
            switch family.kind {
            case .counter: #expect(family.name.hasSuffix("_total"), "\(family.name)")
            case .histogram: #expect(family.name.hasSuffix("_seconds"), "\(family.name)")
            case .gauge: #expect(!family.name.hasSuffix("_total"), "\(family.name)")
            }
        }
    }

    @Test func registriesOfTwoInstancesAreApart() throws {
        let first = PrometheusJobMetrics(version: "a")
        let second = PrometheusJobMetrics(version: "b")
        first.metrics.processStarted()
        let text = String(decoding: second.exposition(), as: UTF8.self)
        #expect(text.contains("jobd_processes_started_total 0"))
        #expect(String(decoding: first.exposition(), as: UTF8.self).contains("jobd_processes_started_total 1"))
    }

    @Test func durationsOutOfRangeLandInTheEndBuckets() async throws {
        let prometheus = PrometheusJobMetrics(version: "t")
        // A clock stepped back gives a negative duration; a huge one must not trap.
        prometheus.metrics.stageAttemptFinished(definition: "d", kind: "map", duration: .seconds(-5))
        prometheus.metrics.stageAttemptFinished(definition: "d", kind: "map", duration: .seconds(Int64.max))
        let samples =
            try await PrometheusClientParser.parse(prometheus.exposition())["jobd_stage_duration_seconds"]?.samples
            ?? []
        func bucket(_ le: String) -> Double? {
            samples.first { $0.name.hasSuffix("_bucket") && $0.labels["le"] == le }?.value
        }
        #expect(bucket("0.001") == 1)
        #expect(bucket("3600.0") == 1)
        #expect(bucket("+Inf") == 2)
    }
}

/// The one test that touches the process-wide `MetricsSystem`.
@Suite struct BootstrapTests {
    @Test func bootstrapsOnceAndLibrariesRecordIntoTheSameRegistry() throws {
        let first = PrometheusJobMetrics.bootstrapProcess(version: "1")
        let second = PrometheusJobMetrics.bootstrapProcess(version: "2")
        #expect(first.registry === second.registry)
        // A library recording through the global factory.
        CoreMetrics.Counter(label: "some_library_requests_total").increment(by: 4)
        let text = String(decoding: first.exposition(), as: UTF8.self)
        #expect(text.contains("some_library_requests_total 4"))
        // Other libraries' families come after jobd's.
        let library = try #require(text.range(of: "# TYPE some_library_requests_total"))
        let build = try #require(text.range(of: "# TYPE jobd_build_info"))
        #expect(build.lowerBound < library.lowerBound)
        #expect(text.contains(#"jobd_build_info{version="1"} 1"#))
    }
}
