import Foundation
import Testing

@testable import JobDashboard
@testable import JobStore

/// Each stage's log on the job page.
@Suite struct StageLogPageTests {
    private func entry(
        _ position: Int, _ sequence: Int, _ content: StageLogEntry.Content, attempt: Int = 1
    ) -> StageLogEntry {
        StageLogEntry(
            cursor: StageLogCursor(jobAttempt: 1, position: position, attempt: attempt, sequence: sequence),
            at: renderTime.addingTimeInterval(-60 + Double(sequence) * 0.25), content: content)
    }

    @Test func eachStageShowsItsLinesWithTheirTimesEscaped() async throws {
        let job = makeJob(1)
        let stages = [makeStage(0, name: "fetch"), makeStage(1, name: "quiet")]
        var source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: stages)])
        source.logs = [
            entry(0, 0, .line(Array("<b>hello</b>".utf8))),
            entry(0, 1, .line(Array("\u{1B}[31mred".utf8) + [0xFF])),
            entry(0, 2, .dropped(lines: 7, bytes: 70)),
            entry(0, 9, .line(Array("the end".utf8))),
        ]
        let html = await Dashboard(source: source).jobPage(id: "1").html
        #expect(html.occurrences(of: "<pre class=\"log\">") == 1, "only the stage that wrote something")
        #expect(html.contains("<span class=\"t\">20:25:40.000</span> &lt;b&gt;hello&lt;/b&gt;\n"), "\(html)")
        #expect(
            html.contains(
                "<span class=\"t\">20:25:40.250</span> <span class=\"ctl\" title=\"U+001B\">\u{241B}</span>[31mred<span class=\"ctl\">\\xFF</span>\n"
            ))
        #expect(html.contains("… 7 lines (70 bytes) dropped"))
        #expect(!html.contains("\u{1B}"))
        #expect(!html.contains("http-equiv=\"refresh\""), "a resolved job's page stays put")
    }

    @Test func stdoutKeptInTheLogIsMarked() async throws {
        let job = makeJob(1)
        let stages = [makeStage(0, name: "tap")]
        var source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: stages)])
        var printed = entry(0, 1, .line(Array("printed".utf8)))
        printed.stream = .stdout
        source.logs = [entry(0, 0, .line(Array("said".utf8))), printed]
        let html = await Dashboard(source: source).jobPage(id: "1").html
        #expect(html.contains("<span class=\"t\">20:25:40.000</span> said\n"), "\(html)")
        #expect(html.contains("<span class=\"t\">20:25:40.250</span> <span class=\"out\">stdout</span> printed\n"))
    }

    @Test func aRunningJobsPageReloadsItself() async throws {
        let job = makeJob(1, state: .running)
        let stages = [makeStage(0, name: "fetch", state: .running, ranFor: nil)]
        var source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: stages)])
        source.logs = [entry(0, 0, .line(Array("working".utf8)))]
        let html = await Dashboard(source: source).jobPage(id: "1").html
        #expect(html.contains("<meta http-equiv=\"refresh\" content=\"2\">"))
        #expect(html.contains("working\n"))
        #expect(html.contains("reload now</a>"))
    }
}
