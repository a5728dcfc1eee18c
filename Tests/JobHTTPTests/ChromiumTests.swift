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
/// it, in the test process's one browser (``ChromiumBrowser/shared()``).
/// Screenshots are written to a temporary folder, and copied to
/// `$JOBD_SCREENSHOT_DIR` when it is set (docs/dashboard*.png come from there).
@Suite(.serialized) struct ChromiumTests {
    @Test func theDashboardShowsTheLatestJobsAndAJobsStagesAndHostileValuesAsText() async throws {
        try requireTool(ChromiumBrowser.path, package: "chromium")
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let world = try await DemoJobs.fill(store)
        let dashboard = Dashboard(source: StoreDashboardSource(store: store) { DemoJobs.snapshot() })

        let browser = try ChromiumBrowser.shared()

        try await withHTTPService(dashboard: dashboard) { bound in
            let base = bound.baseURL
            let page = try await browser.newPage(width: 1280, height: 1000)
            // The list: the newest jobs, the hostile one's values as text.
            try await page.open(base + "/")
            let list = try await page.html()
            #expect(list.contains("href=\"jobs/\(world.newest)\""))
            #expect(list.contains("nightly-report"))
            #expect(!list.lowercased().contains("<script"), "a script element from data")
            #expect(list.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

            // A job's page: its stages, on the timeline and each with its value.
            try await page.open(base + "/jobs/\(world.report)")
            let job = try await page.html()
            for stage in ["fetch-sales", "total", "publish"] {
                #expect(job.contains(stage), "\(stage)")
            }
            #expect(job.occurrences(of: "<rect class=\"s-") >= 3)
            #expect(job.contains("{\"total\": 1284.5}"))

            // The hostile job: markup, 1 MB, invalid UTF-8, controls, bidi — all text.
            try await page.open(base + "/jobs/\(world.hostile)")
            let hostile = try await page.html()
            #expect(!hostile.lowercased().contains("<script"), "a script element from data")
            #expect(hostile.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(hostile.contains("binary: not valid UTF-8"))
            #expect(hostile.contains("cut: "))
            #expect(hostile.contains("U+202E"))
            #expect(!hostile.unicodeScalars.contains("\u{202E}"))
            #expect(hostile.utf8.count < 1_500_000)

            let shots = [
                ("dashboard.png", "/", 1280, 1000), ("dashboard-phone.png", "/", 390, 1500),
                ("dashboard-job.png", "/jobs/\(world.report)", 1280, 1100),
                ("dashboard-job-phone.png", "/jobs/\(world.report)", 390, 1700),
            ]
            for (name, path, width, height) in shots {
                try await page.resize(width: width, height: height, mobile: width < 500)
                try await page.open(base + path)
                let shot = try await page.screenshot()
                try Self.save(shot, name, folder, minimum: 20_000)
            }
        }
    }

    /// An operator in the browser, with cookies and forms as a person uses
    /// them: logs in, retries a rejected job from its page, cancels 50
    /// pending jobs through the confirmation page, searches — each checked in
    /// the store afterwards. One browser for the suite (``ChromiumBrowser``).
    @Test func anOperatorLogsInRetriesCancelsAndSearches() async throws {
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        _ = try await DemoJobs.fill(store)
        let rejected = try #require(
            try await store.list(JobQuery(states: [.rejected], definition: "resize-images", limit: 1)).jobs.first)
        let batch = try await store.submit(
            (0..<50).map { index in
                NewJob(
                    definition: "import-batch", input: Data("{\"file\": \"part-\(index).csv\"}".utf8),
                    stages: [StagePlan(name: "load", kind: "then")])
            }
        ).map(\.id)
        let dashboard = Dashboard(
            source: StoreDashboardSource(store: store) { DemoJobs.snapshot() }, actions: DashboardActions(store))
        let (access, _) = try AccessTests.access(folder: folder)
        let browser = try ChromiumBrowser.shared()

        try await withHTTPService(dashboard: dashboard, access: access) { bound in
            let base = bound.baseURL
            let page = try await browser.newPage(width: 1280, height: 900)
            // Without a session, the list sends the browser to the login form.
            try await page.open(base + "/")
            #expect(try await page.url().hasPrefix(base + "/login"))
            try await Self.shoot(page, "dashboard-login.png", folder, height: 420)
            try await page.fill("input[name=user]", "alice")
            try await page.fill("input[name=password]", AccessTests.password)
            try await page.click("form.login button")
            #expect(try await page.url() == base + "/", "after the login")

            // Retry the rejected job from its page.
            try await page.open(base + "/jobs/\(rejected.id)")
            try await page.click("form[action='\(rejected.id)/retry'] button")
            let afterRetry = try await page.html()
            #expect(try await page.url() == base + "/jobs/\(rejected.id)", "\(afterRetry.prefix(3000))")
            #expect(try await page.html().contains("retried by alice"))
            try await Self.shoot(page, "dashboard-job-actions.png", folder, height: 600)

            // Cancel the 50 pending import-batch jobs through the confirmation page.
            try await page.open(base + "/?state=pending&definition=import-batch")
            try await page.click("a[href^='actions?verb=cancel']")
            #expect(try await page.html().contains("Cancel 50 jobs?"))
            try await Self.shoot(page, "dashboard-confirm.png", folder, height: 360)
            try await page.click("form[action='actions'] button")
            #expect(try await page.url() == base + "/?state=pending&definition=import-batch")
            #expect(try await page.html().contains("No jobs match."))

            // Search: the filter form, as typed, becomes the URL; the list is the store's search.
            try await page.open(base + "/")
            try await page.evaluate("document.querySelector('select[name=state]').value = 'rejected'; return true")
            try await page.fill("input[name=since]", "2h")
            try await page.fill("input[name=match]", "upstream 503")
            try await page.click("form.filters button")
            #expect(
                try await page.url() == base + "/?state=rejected&definition=&key=&since=2h&until=&match=upstream+503")
            let listed = try await page.html().matches(of: /href="jobs\/(\d+)"/).map { Int64($0.1)! }
            let found = try await store.search(
                "upstream 503",
                JobQuery(states: [.rejected], createdSince: Date().addingTimeInterval(-7200), limit: 50))
            #expect(!listed.isEmpty && listed == found.jobs.map(\.id), "\(listed)")
            try await Self.shoot(page, "dashboard-search.png", folder, height: 700)
        }

        #expect(try await store.job(rejected.id)?.job.attempt == rejected.attempt + 1)
        for id in batch { #expect(try await store.job(id)?.job.state == .cancelled) }
        let actions = try await store.actions(limit: 10, before: nil)
        #expect(actions.map(\.filter) == ["state=pending&definition=import-batch", "job \(rejected.id)"])
        #expect(actions.allSatisfy { $0.actor.name == "alice" })
        try await store.close()
    }

    /// A PNG of the page at 1280 × `height`, checked and saved.
    static func shoot(_ page: ChromiumPage, _ name: String, _ folder: TemporaryFolder, height: Int) async throws {
        try await page.resize(width: 1280, height: height)
        let png = try await page.screenshot()
        try await page.resize(width: 1280, height: 900)
        try save(png, name, folder, minimum: 5_000)
    }

    /// Checks a PNG, writes it to the test's folder, and copies it to `$JOBD_SCREENSHOT_DIR` when set.
    static func save(_ png: Data, _ name: String, _ folder: TemporaryFolder, minimum: Int) throws {
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name) is a PNG")
        #expect(png.count > minimum, "\(name) is \(png.count) bytes: blank?")
        try png.write(to: URL(fileURLWithPath: folder.file(name)))
        if let target = ProcessInfo.processInfo.environment["JOBD_SCREENSHOT_DIR"], !target.isEmpty {
            try png.write(to: URL(fileURLWithPath: target).appendingPathComponent(name))
        }
    }
}
