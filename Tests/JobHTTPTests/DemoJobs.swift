import Foundation
import JobDashboard
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import TestSupport

/// An hour of a small jobd's work, for the browser test and the screenshots.
enum DemoJobs {
    struct World {
        /// A job retried once, of three stages.
        var report: Int64
        /// A job whose values are hostile: markup, 1 MB, invalid UTF-8, bidi.
        var hostile: Int64
        var newest: Int64
    }

    static let definitions = ["send-invoices", "resize-images", "sync-crm", "cleanup-tmp", "nightly-report"]

    static func fill(_ store: SQLiteJobStore) async throws -> World {
        let filler = StoreFiller(store: store)
        let value = { (text: String) in StageOutcome.fulfilled(Data(text.utf8)) }
        // 140 jobs over the last hour, the busiest around 20 minutes ago.
        for index in 0..<140 {
            let definition = definitions[index * 7 % 4]
            let failed = index % 11 == 3 || index % 17 == 5
            let cancelled = index % 29 == 7
            let outcome: JobOutcome =
                cancelled
                ? .cancelled("cancelled by jobctl cancel")
                : failed
                    ? .rejected("exit status 1: upstream returned 503 Service Unavailable")
                    : .fulfilled(Data("done".utf8))
            let stages: [StoreFiller.StageRun] = [
                .init(
                    name: "fetch", outcome: value("{\"items\": \(index * 3 % 17 + 1)}"),
                    seconds: 0.4 + Double(index % 5) / 3),
                .init(
                    name: "process", kind: "map", outcome: failed ? .rejected("exit status 1") : value("ok"),
                    seconds: 1.2),
            ]
            let id = try await filler.run(
                definition, input: Data("{\"batch\": \(index)}".utf8), stages: stages, finish: outcome)
            let minutesAgo = 59.5 - Double(index) * 59 / 140
            let bump = sin(Double(index) / 9) * 30
            try await filler.backdate(id, by: max(90, minutesAgo * 60 + bump))
        }

        let hostile = try await filler.run(
            "import-feed", input: Data("<script>alert(1)</script>\u{07}\u{1B}[31m".utf8),
            stages: [
                .init(
                    name: "download", outcome: .fulfilled(Data(repeating: UInt8(ascii: "A"), count: 1_000_000)),
                    seconds: 3.1),
                .init(
                    name: "decode", kind: "map",
                    outcome: .fulfilled(Data([0x6F, 0x6B, 0xFF, 0xFE, 0x20]) + Data("latin-1 café".utf8)), seconds: 0.05
                ),
                .init(
                    name: "invoice\u{202E}fdp.exe", outcome: .rejected("<script>alert(1)</script>\nat line 3"),
                    seconds: 0.4),
            ],
            finish: .rejected("<script>alert(1)</script>\nat line 3"))
        try await filler.backdate(hostile, by: 420)

        // The report: its first attempt failed at fetch; retried, it went through.
        let reportStages: [StoreFiller.StageRun] = [
            .init(name: "fetch-sales", outcome: value("day,amount\n2026-05-27,1284.5\n"), seconds: 4.2, attempts: 3),
            .init(name: "total", kind: "map", outcome: value("{\"total\": 1284.5}"), seconds: 0.02),
            .init(
                name: "publish", kind: "done", outcome: value("published to /srv/reports/2026-05-27.html"), seconds: 1.6
            ),
            .init(name: "alert", kind: "catch", outcome: .skipped, seconds: 0),
        ]
        let report = try await filler.run(
            "nightly-report", input: Data("--day yesterday".utf8),
            stages: [
                .init(
                    name: "fetch-sales",
                    outcome: .rejected("exit status 2: curl: (7) Failed to connect to sales.internal port 443"),
                    seconds: 2.5)
            ]
                + reportStages.dropFirst().map {
                    var skipped = $0
                    skipped.outcome = .skipped
                    skipped.seconds = 0
                    return skipped
                },
            finish: .rejected("fetch-sales: exit status 2"))
        _ = try await store.retry(report)
        let claimed = try await store.claim(pool: "default", owner: "web-1", limit: 1, leaseDuration: .seconds(600))
        guard let lease = claimed.first?.lease, lease.jobID == report else {
            throw TestFailure("could not claim the retried report")
        }
        // After the first attempt's stages (2.5 s), as a retry with a backoff would.
        var clock = Date().addingTimeInterval(6)
        for (position, stage) in reportStages.enumerated() {
            let end = clock.addingTimeInterval(stage.seconds)
            if stage.outcome != .skipped {
                try await store.recordStageStart(
                    StageStart(lease: lease, position: position, attempt: stage.attempts, at: clock))
            }
            try await store.recordStageResult(
                StageResult(
                    lease: lease, position: position, outcome: stage.outcome, exitCode: stage.kind == "then" ? 0 : nil,
                    attempt: stage.outcome == .skipped ? 0 : stage.attempts,
                    startedAt: stage.outcome == .skipped ? nil : clock,
                    at: end))
            clock = end
        }
        try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(Data("published".utf8)), at: clock))
        // The claim set started_at before the backoff; the job started with its first stage.
        try await store.executeInWriteTransaction(
            """
            UPDATE jobs SET started_at = (SELECT min(started_at) FROM stages WHERE job_id = \(report)) WHERE id = \(report)
            """)
        try await filler.backdate(report, by: 75)

        // Now: two running, a few waiting.
        try await filler.run(
            "resize-images", pool: "media",
            stages: [
                .init(name: "fetch", outcome: value("img-4411.jpg"), seconds: 0.3),
                .init(name: "resize", outcome: value(""), seconds: 0),
            ], finish: nil, start: Date().addingTimeInterval(-8))
        try await filler.run(
            "sync-crm", stages: [.init(name: "pull", outcome: value(""), seconds: 0)], finish: nil,
            start: Date().addingTimeInterval(-3))
        var newest: Int64 = 0
        for definition in ["send-invoices", "resize-images", "send-invoices"] {
            let pool = definition == "resize-images" ? "media" : "default"
            newest = try await store.submit(
                NewJob(definition: definition, pool: pool, stages: [StagePlan(name: "run", kind: "then")])
            ).id
        }
        return World(report: report, hostile: hostile, newest: newest)
    }

    static func snapshot() -> DashboardSnapshot {
        let now = Date()
        return DashboardSnapshot(
            pools: [
                PoolRow(name: "default", capacity: 16, running: 1), PoolRow(name: "media", capacity: 4, running: 1),
                PoolRow(name: "reports", capacity: 2, running: 0),
            ],
            schedules: [
                ScheduleRow(
                    definition: "nightly-report", expression: "cron: 0 3 * * *",
                    nextFire: now.addingTimeInterval(6 * 3600 + 1260), lastFired: now.addingTimeInterval(-40),
                    lastState: .fulfilled),
                ScheduleRow(
                    definition: "cleanup-tmp", expression: "every: 15m", nextFire: now.addingTimeInterval(290),
                    lastFired: now.addingTimeInterval(-610), lastState: .fulfilled),
                ScheduleRow(
                    definition: "sync-crm", expression: "calendar: Mon..Fri *-*-* 09:00",
                    nextFire: now.addingTimeInterval(20 * 3600), lastFired: now.addingTimeInterval(-3),
                    lastState: .running),
            ],
            build: BuildInfo(
                version: "0.9.0", node: "web-1", startedAt: now.addingTimeInterval(-3 * 86_400 - 4 * 3600)),
            now: now)
    }
}
