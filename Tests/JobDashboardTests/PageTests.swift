import Foundation
import Testing

@testable import JobDashboard
@testable import JobStore

@Suite struct JobListPageTests {
    @Test func pagesLikeJobctlList() async throws {
        let jobs = (1...7).map { (id: Int) -> Job in
            let definition = id % 2 == 0 ? "even" : "odd"
            return makeJob(Int64(id), definition: definition, state: id == 7 ? .running : .fulfilled)
        }
        let dashboard = Dashboard(source: FixedSource(jobs: jobs))
        let first = await dashboard.jobsPage(query: [("limit", "3")])
        #expect(first.html.contains("href=\"jobs/7\""))
        #expect(!first.html.contains("href=\"jobs/4\""))
        #expect(first.html.contains("href=\"?limit=3&amp;before=5\">Older »</a>"))
        #expect(!first.html.contains("Newest"))
        let second = await dashboard.jobsPage(query: [("limit", "3"), ("before", "5")])
        #expect(second.html.contains("href=\"jobs/4\"") && second.html.contains("href=\"jobs/2\""))
        #expect(second.html.contains("« Newest"))
        let even = await dashboard.jobsPage(query: [("definition", "even"), ("state", "resolved")])
        #expect(even.html.occurrences(of: "<tr><td class=\"num\" data-label=\"ID\">") == 3)
        let running = await dashboard.jobsPage(query: [("state", "unresolved")])
        #expect(running.html.occurrences(of: "<tr><td class=\"num\" data-label=\"ID\">") == 1)
        #expect(running.html.contains("<option value=\"unresolved\" selected>"))
    }

    @Test func rowsTheStoreCouldNotReadAreSaidNotHidden() async throws {
        let bad = UnreadableRow(
            jobID: 9, message: "cannot read the jobs row id 9: its column state holds the text '<b>bogus</b>'")
        let dashboard = Dashboard(source: FixedSource(jobs: [makeJob(1)], unreadable: [bad]))
        let page = await dashboard.jobsPage(query: [])
        #expect(page.status == .ok)
        #expect(page.html.contains("1 row of this page could not be read and is left out"))
        #expect(page.html.contains("its column state holds the text &#39;&lt;b&gt;bogus&lt;/b&gt;&#39;"))
        #expect(page.html.contains("href=\"jobs/1\""))
        let clean = await Dashboard(source: FixedSource(jobs: [makeJob(1)])).jobsPage(query: [])
        #expect(!clean.html.contains("could not be read"))
    }

    @Test(arguments: [("state", "bogus"), ("limit", "0"), ("limit", "201"), ("before", "-1"), ("before", "x")])
    func badQueriesAreRefusedWithWhatToPass(_ item: (String, String)) async {
        let page = await Dashboard(source: FixedSource()).jobsPage(query: [item])
        #expect(page.status == .badRequest)
        #expect(page.html.contains("\(item.0) must be"))
    }

    @Test func showsCountsPoolsAndTheResolvedChart() async throws {
        let (start, _) = ResolvedChart.window(now: renderTime)
        let minutes = [
            ResolvedMinute(minute: start, state: .fulfilled, count: 12),
            ResolvedMinute(minute: start, state: .rejected, count: 3),
            ResolvedMinute(minute: start.addingTimeInterval(59 * 60), state: .cancelled, count: 1),
            // Outside the hour: not drawn.
            ResolvedMinute(minute: start.addingTimeInterval(-60), state: .fulfilled, count: 99),
        ]
        let source = FixedSource(
            jobs: [makeJob(1, state: .rejected)], minutes: minutes,
            pools: [
                PoolJobCounts(pool: "default", pending: 41, running: 5),
                PoolJobCounts(pool: "elsewhere", pending: 2, running: 0),
            ])
        let html = await Dashboard(source: source).jobsPage(query: []).html
        #expect(html.occurrences(of: "<rect class=\"s-") == 3)
        #expect(html.contains("<title>\(DisplayTime.clock(start)) UTC: 12 fulfilled, 3 rejected</title>"))
        #expect(!html.contains("99 fulfilled"))
        #expect(html.contains(">20</text>"))  // the axis: 15 a minute at most, shown up to 20
        #expect(html.contains("3 / 16") && html.contains("41 pending · 5 running on all nodes"))
        #expect(html.contains("elsewhere") && html.contains("not configured here"))
    }

    @Test func showsTheSchedulesThatFireSoonestAndNoCardWithoutSchedules() async throws {
        let schedules =
            (1...7).map {
                ScheduleRow(
                    definition: "s\($0)", expression: "every: \($0)m",
                    nextFire: renderTime.addingTimeInterval(Double($0) * 60))
            } + [
                ScheduleRow(definition: "done", expression: "calendar: 2020-01-01", nextFire: nil),
                ScheduleRow(
                    definition: Hostile.script, expression: "every: 30s", nextFire: renderTime.addingTimeInterval(30)),
            ]
        let html = await Dashboard(source: FixedSource(schedules: schedules)).jobsPage(query: []).html
        #expect(html.contains("<h2>Schedules: next fires</h2>"))
        // Soonest first, five of them: the hostile name (as text), then s1 … s4.
        let hostile = try #require(html.range(of: "&lt;script&gt;alert(1)&lt;/script&gt;</a>"))
        let first = try #require(html.range(of: ">s1</a>"))
        #expect(hostile.lowerBound < first.lowerBound)
        #expect(html.contains(">s4</a>") && !html.contains(">s5</a>") && !html.contains(">done</a>"))
        #expect(html.contains(">in 30 s</time>"), "the next fire, relative")
        #expect(html.contains("<a href=\"schedules\">all 9 schedules »</a>"))

        let none = await Dashboard(source: FixedSource(schedules: [])).jobsPage(query: []).html
        #expect(!none.contains("Schedules: next fires"))
        #expect(
            await Dashboard(source: FixedSource(schedules: [])).schedulesPage().html.contains(
                "No definition has a schedule."))
    }

    @Test func anEmptyHourSaysSo() async {
        let html = await Dashboard(source: FixedSource()).jobsPage(query: []).html
        #expect(html.contains("no job resolved in the last hour"))
        #expect(html.contains("No jobs match."))
    }

    @Test func aStoreThatCannotBeReadGivesA503ThatSaysWhy() async {
        struct Broken: Error, CustomStringConvertible { var description: String { "disk <gone>" } }
        let page = await Dashboard(source: FixedSource(failing: Broken())).jobsPage(query: [])
        #expect(page.status == .unavailable)
        #expect(page.html.contains("disk &lt;gone&gt;"))
    }

    @Test func theNiceAxisCeilingIsEven() {
        #expect(
            [0, 1, 2, 3, 5, 7, 11, 41, 99, 101, 5000].map(ResolvedChart.niceCeiling) == [
                2, 2, 2, 4, 6, 10, 20, 60, 100, 200, 6000,
            ])
    }
}

@Suite struct JobDetailPageTests {
    @Test func theTimelineHasABarPerStartedStageAndAttempt() async throws {
        let job = makeJob(1, state: .running, attempt: 2, startedAgo: 100, ranFor: nil)
        let stages = [
            makeStage(0, name: "fetch", startedAgo: 90, ranFor: 20, attempts: 3),
            makeStage(1, name: "total", kind: "map", state: .running, startedAgo: 60, ranFor: nil),
            makeStage(2, name: "publish", kind: "done", state: .pending, startedAgo: nil, ranFor: nil),
        ]
        let earlier = JobAttempt(
            jobID: 1, attempt: 1, state: .rejected, result: nil, error: "exit status 2", startedAt: nil,
            finishedAt: nil,
            stages: [makeStage(0, name: "fetch", state: .rejected, error: "boom", startedAgo: 180, ranFor: 5)])
        let source = FixedSource(
            jobs: [job], details: [1: JobDetail(job: job, stages: stages)], history: [1: [earlier]],
            events: [
                1: [
                    JobEvent(
                        id: 1, jobID: 1, position: 0, kind: "stage-retry", message: "try 2 <of> 3",
                        createdAt: renderTime)
                ]
            ])
        let html = await Dashboard(source: source).jobPage(id: "1").html
        #expect(html.occurrences(of: "<rect class=\"s-") == 3)
        #expect(html.contains("<rect class=\"s-running\""))
        #expect(html.contains("attempt 1</text>") && html.contains("attempt 2 (current)</text>"))
        #expect(html.contains(">pending</text>"))
        #expect(html.contains("20.0 s ×3</text>"))
        // The axis runs from the earliest start (180 s ago) to now.
        #expect(html.contains("+3 min 0 s</text>"))
        #expect(html.contains("try 2 &lt;of&gt; 3"))
        #expect(html.contains("<summary>Attempt 1:"))
    }

    /// Stage names in the timeline are cut and made visible without any
    /// element: an HTML element inside SVG text (a `<span>`) ends the SVG
    /// in a browser and spills the rest of the timeline as loose text.
    @Test func longAndOddStageNamesStayInsideTheTimeline() async throws {
        let long = String(repeating: "W", count: 40) + "\u{07}"
        let job = makeJob(1)
        let stages = [makeStage(0, name: long, attempts: 400), makeStage(1, name: "a\u{202E}b")]
        let source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: stages)])
        let html = await Dashboard(source: source).jobPage(id: "1").html
        let start = try #require(html.range(of: "<svg class=\"timeline\""))
        let end = try #require(html.range(of: "</div>", range: start.upperBound..<html.endIndex))
        let svg = html[start.lowerBound..<end.lowerBound]
        #expect(!svg.contains("<span"), "\(svg)")
        #expect(svg.contains("0 " + String(repeating: "W", count: 24) + "…</text>"))
        #expect(svg.contains(String(repeating: "W", count: 40) + "\u{2407} (then)"), "the bar's tooltip names it whole")
        #expect(svg.contains("1 aU+202Eb</text>"))
        #expect(!svg.unicodeScalars.contains("\u{202E}"))
        #expect(svg.contains("×400</text>"))
    }

    @Test func unknownAndMalformedIDsAre404() async {
        let dashboard = Dashboard(source: FixedSource())
        #expect(await dashboard.jobPage(id: "42").status == .notFound)
        let malformed = await dashboard.jobPage(id: "<b>")
        #expect(malformed.status == .notFound)
        #expect(malformed.html.contains("&lt;b&gt;"))
        // One spelling a job: the digits jobctl prints.
        let job = makeJob(1)
        let one = Dashboard(source: FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: [])]))
        #expect(await one.jobPage(id: "1").status == .ok)
        for other in ["+1", "01", "1 ", "１"] {
            #expect(await one.jobPage(id: other).status == .notFound, "\(other)")
        }
    }

    @Test func aJobsPageShowsItsLatestEventsOnly() async {
        let job = makeJob(1)
        let events = (1...(JobDetailPage.maxEvents + 50)).map {
            JobEvent(
                id: Int64($0), jobID: 1, position: 0, kind: "stage-retry", message: "retry number \($0).",
                createdAt: renderTime)
        }
        let source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: [])], events: [1: events])
        let html = await Dashboard(source: source).jobPage(id: "1").html
        #expect(html.occurrences(of: "retry number ") == JobDetailPage.maxEvents)
        #expect(html.contains("retry number \(JobDetailPage.maxEvents + 50)."))
        #expect(!html.contains("retry number 50."))
        #expect(html.contains("The \(JobDetailPage.maxEvents) latest of \(JobDetailPage.maxEvents + 50) events"))
    }
}

@Suite struct SchedulesPageTests {
    @Test func listsSchedulesByNextFire() async {
        let schedules = [
            ScheduleRow(definition: "later", expression: "every: 1h", nextFire: renderTime.addingTimeInterval(3600)),
            ScheduleRow(
                definition: Hostile.script, expression: Hostile.controls, nextFire: renderTime.addingTimeInterval(90),
                lastFired: renderTime.addingTimeInterval(-30), lastState: .rejected),
            ScheduleRow(definition: "never", expression: "calendar: 2020-01-01", nextFire: nil),
        ]
        let html = await Dashboard(source: FixedSource(schedules: schedules)).schedulesPage().html
        let order = ["&lt;script&gt;", "later", "never"].map { html.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil })
        #expect(order.compactMap { $0 } == order.compactMap { $0 }.sorted())
        #expect(html.contains("in 1 min") && html.contains("30 s ago") && html.contains(">never</span>"))
        #expect(html.invisibleScalars.isEmpty)
        #expect(!html.lowercased().contains("<script"))
    }
}
