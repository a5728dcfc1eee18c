import BenchmarkSupport
import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import JobValues

extension Benchmarks {
    /// Read latencies on a database of `jobs` jobs (3 stages each), built
    /// in place with SQL if it is not there yet: medians, each held to the
    /// issue's bound, the p99 in the note.
    func reads(jobs: Int, path: String, into report: inout Report) async throws {
        let label =
            jobs >= 1_000_000 && jobs % 1_000_000 == 0
            ? "\(jobs / 1_000_000)M"
            : jobs % 1000 == 0 ? "\(jobs / 1000)k" : "\(jobs)"
        let store = try SQLiteJobStore(path: path)
        let have = Int(try await store.queryStrings("SELECT count(*) FROM jobs").first.flatMap { $0 } ?? "0") ?? 0
        if have < jobs {
            let watch = Stopwatch()
            try await SyntheticJobs.fill(store, upTo: jobs, from: have)
            print("  (built a \(label)-job database in \(Report.format(watch.elapsedSeconds, 1)) s at \(path))")
        } else {
            print("  (reusing the \(have)-job database at \(path))")
        }
        let maxID = Int64(try await store.queryStrings("SELECT max(id) FROM jobs").first.flatMap { $0 } ?? "1") ?? 1
        var generator = SystemRandomNumberGenerator()
        // Warm the page cache the way a running daemon's would be.
        for _ in 0..<200 { _ = try await store.job(Int64.random(in: 1...maxID, using: &generator)) }

        func add(_ name: String, _ samples: [Double], atMost bound: Double) {
            report.add(
                "[\(label)] \(name), median", median(samples), unit: "ms", .atMost(bound),
                note: "p99 \(Report.format(percentile(samples, 0.99), 3)) ms", digits: 3)
        }
        add(
            "one job with its stages",
            try await Self.latencies(count: 2000) {
                let detail = try await store.job(Int64.random(in: 1...maxID, using: &generator))
                guard detail?.stages.count == 3 else { throw BenchError("job without its 3 stages") }
            }, atMost: Thresholds.oneJobMilliseconds)
        func page(_ name: String, _ query: @escaping () -> JobQuery) async throws {
            add(
                name,
                try await Self.latencies(count: 300) {
                    let asked = query()
                    let page = try await store.list(asked)
                    guard page.jobs.count == 50 else {
                        throw BenchError("a page of \(page.jobs.count) jobs, not 50, for \(asked)")
                    }
                }, atMost: Thresholds.pageMilliseconds)
        }
        // Cursors anywhere in the newest 90% of the table, so a full page follows.
        func cursor() -> Int64 { Int64.random(in: (maxID / 10)...maxID, using: &generator) }
        try await page("page of 50 pending, newest") { .pending() }
        try await page("page of 50 pending, random cursor") { .pending(before: cursor()) }
        try await page("page of 50 resolved, newest") { .resolved() }
        try await page("page of 50 resolved, random cursor") { .resolved(before: cursor()) }
        // One job in 70 is a pending or running def-3: cursors in the newer half leave 50 below.
        try await page("page of 50 pending of one definition, random cursor") {
            .pending(definition: "def-3", before: Int64.random(in: (maxID / 2)...maxID, using: &generator))
        }
        try await store.close()
    }

    /// `count` timings of `body`, in milliseconds.
    static func latencies(count: Int, _ body: () async throws -> Void) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = ContinuousClock.now
            try await body()
            samples.append((ContinuousClock.now - start).timeInterval * 1000)
        }
        return samples
    }
}
