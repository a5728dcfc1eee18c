import Foundation
import JobConfig
import JobDashboard
import JobHTTP
import JobMetrics
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

/// The dashboard in headless Chromium (Debian's, installed by
/// scripts/test-deps), served from a SQLite store filled as an engine fills
/// it. Screenshots are written to a temporary folder, and copied to
/// `$JOBD_SCREENSHOT_DIR` when it is set (docs/dashboard.png comes from there).
@Suite(.serialized) struct ChromiumTests {
    @Test func theDashboardShowsTheLatestJobsAndAJobsStagesAndHostileValuesAsText() async throws {
        try requireTool(HeadlessChromium.path, package: "chromium")
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let world = try await DemoJobs.fill(store)
        let dashboard = Dashboard(source: StoreDashboardSource(store: store) { DemoJobs.snapshot() })

        try await withHTTPService(dashboard: dashboard) { bound in
            let base = bound.baseURL
            // The list: the newest jobs, the hostile one's values as text.
            let list = try await HeadlessChromium.dumpDOM(base + "/", folder: folder.path)
            #expect(list.contains("href=\"jobs/\(world.newest)\""))
            #expect(list.contains("nightly-report"))
            #expect(!list.lowercased().contains("<script"), "a script element from data")
            #expect(list.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

            // A job's page: its stages, on the timeline and each with its value.
            let job = try await HeadlessChromium.dumpDOM(base + "/jobs/\(world.report)", folder: folder.path)
            for stage in ["fetch-sales", "total", "publish"] {
                #expect(job.contains(stage), "\(stage)")
            }
            #expect(job.occurrences(of: "<rect class=\"s-") >= 3)
            #expect(job.contains("{\"total\": 1284.5}"))

            // The hostile job: markup, 1 MB, invalid UTF-8, controls, bidi — all text.
            let hostile = try await HeadlessChromium.dumpDOM(base + "/jobs/\(world.hostile)", folder: folder.path)
            #expect(!hostile.lowercased().contains("<script"), "a script element from data")
            #expect(hostile.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(hostile.contains("binary: not valid UTF-8"))
            #expect(hostile.contains("cut: "))
            #expect(hostile.contains("U+202E"))
            #expect(!hostile.unicodeScalars.contains("\u{202E}"))
            #expect(hostile.utf8.count < 1_500_000)

            let shots = [
                ("dashboard.png", "/", "1280,1000"), ("dashboard-phone.png", "/", "390,1500"),
                ("dashboard-job.png", "/jobs/\(world.report)", "1280,1100"),
                ("dashboard-job-phone.png", "/jobs/\(world.report)", "390,1700"),
            ]
            for (name, path, size) in shots {
                let file = folder.file(name)
                try await HeadlessChromium.screenshot(base + path, size: size, to: file, folder: folder.path)
                let png = try Data(contentsOf: URL(fileURLWithPath: file))
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name) is a PNG")
                #expect(png.count > 20_000, "\(name) is \(png.count) bytes: blank?")
                if let target = ProcessInfo.processInfo.environment["JOBD_SCREENSHOT_DIR"], !target.isEmpty {
                    let destination = URL(fileURLWithPath: target).appendingPathComponent(name)
                    try? FileManager.default.removeItem(at: destination)
                    try FileManager.default.copyItem(at: URL(fileURLWithPath: file), to: destination)
                }
            }
        }
    }
}
