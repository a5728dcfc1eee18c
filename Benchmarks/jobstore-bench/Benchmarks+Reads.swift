import Foundation
@_spi(Maintenance) import JobStore

extension Benchmarks {
    /// Read latencies on a database of `jobs` jobs (3 stages each), built
    /// in place with SQL if it is not there yet.
    func reads(jobs: Int, path: String, label: String) async throws -> [Figure] {
        let store = try SQLiteJobStore(path: path)
        let have = Int(try await store.queryStrings("SELECT count(*) FROM jobs").first.flatMap { $0 } ?? "0") ?? 0
        if have < jobs {
            let start = ContinuousClock.now
            try await SyntheticJobs.fill(store, upTo: jobs, from: have)
            let seconds = (ContinuousClock.now - start).seconds
            print(String(format: "  (built a %@-job database in %.1f s at %@)", label, seconds, path))
        } else {
            print("  (reusing the \(have)-job database at \(path))")
        }
        let maxID = Int64(try await store.queryStrings("SELECT max(id) FROM jobs").first.flatMap { $0 } ?? "1") ?? 1
        var generator = SystemRandomNumberGenerator()
        // Warm the page cache the way a running daemon's would be.
        for _ in 0..<200 { _ = try await store.job(Int64.random(in: 1...maxID, using: &generator)) }

        let oneJob = try await Self.latencies(count: 2000) {
            let detail = try await store.job(Int64.random(in: 1...maxID, using: &generator))
            guard detail?.stages.count == 3 else { throw BenchError("job without its 3 stages") }
        }
        func page(_ query: @escaping () -> JobQuery) async throws -> Latencies {
            try await Self.latencies(count: 300) {
                let asked = query()
                let page = try await store.list(asked)
                guard page.jobs.count == 50 else { throw BenchError("a page of \(page.jobs.count) jobs, not 50, for \(asked)") }
            }
        }
        // Cursors anywhere in the newest 90% of the table, so a full page follows.
        func cursor() -> Int64 { Int64.random(in: (maxID / 10)...maxID, using: &generator) }
        let pendingFirst = try await page { .pending() }
        let pendingDeep = try await page { .pending(before: cursor()) }
        let resolvedFirst = try await page { .resolved() }
        let resolvedDeep = try await page { .resolved(before: cursor()) }
        // One job in 70 is a pending or running def-3: cursors in the newer half leave 50 below.
        let byDefinition = try await page {
            .pending(definition: "def-3", before: Int64.random(in: (maxID / 2)...maxID, using: &generator))
        }
        try await store.close()
        return [
            report(Figure(name: "[\(label)] one job with its stages, median (p99 \(oneJob.p99Text))",
                          value: oneJob.medianMs, unit: "ms", target: 1, higherIsBetter: false)),
            report(Figure(name: "[\(label)] page of 50 pending, newest, median (p99 \(pendingFirst.p99Text))",
                          value: pendingFirst.medianMs, unit: "ms", target: 10, higherIsBetter: false)),
            report(Figure(name: "[\(label)] page of 50 pending, random cursor, median (p99 \(pendingDeep.p99Text))",
                          value: pendingDeep.medianMs, unit: "ms", target: 10, higherIsBetter: false)),
            report(Figure(name: "[\(label)] page of 50 resolved, newest, median (p99 \(resolvedFirst.p99Text))",
                          value: resolvedFirst.medianMs, unit: "ms", target: 10, higherIsBetter: false)),
            report(Figure(name: "[\(label)] page of 50 resolved, random cursor, median (p99 \(resolvedDeep.p99Text))",
                          value: resolvedDeep.medianMs, unit: "ms", target: 10, higherIsBetter: false)),
            report(Figure(name: "[\(label)] page of 50 pending of one definition, random cursor, median (p99 \(byDefinition.p99Text))",
                          value: byDefinition.medianMs, unit: "ms", target: 10, higherIsBetter: false)),
        ]
    }
}
