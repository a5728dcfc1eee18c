import Foundation
import Testing

@testable import JobDashboard
@testable import JobStore

@Suite struct EscapingTests {
    @Test(arguments: [Hostile.script, Hostile.attribute, "a & b < c > d ' e \" f"])
    func markupInEveryFieldOfTheListIsText(_ value: String) async throws {
        let job = makeJob(1, definition: value, state: .rejected, error: value + "\nsecond line")
        let source = FixedSource(jobs: [job], pools: [PoolJobCounts(pool: value, pending: 1, running: 0)])
        let page = await Dashboard(source: source).jobsPage(query: [("definition", value)])
        #expect(page.status == .ok)
        #expect(!page.html.lowercased().contains("<script"))
        #expect(!page.html.contains("onmouseover=\""))
        #expect(page.html.contains(HTML.escape(value)))
        // Only the error's first line is listed.
        #expect(!page.html.contains("second line"))
    }

    @Test func markupOnTheJobPageIsText() async throws {
        let stage = makeStage(
            0, name: Hostile.script, kind: Hostile.attribute, value: Data(Hostile.script.utf8),
            error: Hostile.script)
        let job = makeJob(
            1, definition: Hostile.script, input: Data(Hostile.attribute.utf8), result: Data(Hostile.script.utf8))
        let source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: [stage])])
        let page = await Dashboard(source: source).jobPage(id: "1")
        #expect(page.status == .ok)
        #expect(!page.html.lowercased().contains("<script"))
        #expect(!page.html.contains("onmouseover=\""))
        #expect(page.html.occurrences(of: "&lt;script&gt;alert(1)&lt;/script&gt;") >= 5)
    }

    @Test func controlCharactersAreMadeVisible() {
        let html = DisplayText.inline(Hostile.controls + "\nline\ttab").rendered
        #expect(html.invisibleScalars.isEmpty)
        for picture in ["␇", "␀", "␛", "␡", "U+0085", "␊", "␉"] {
            #expect(html.contains(picture), "\(picture) in \(html)")
        }
        // In a block, newlines and tabs stay as they are.
        let block = DisplayValue.make(Data("a\nb\tc\u{07}".utf8), limits: .block, multiline: true).body.rendered
        #expect(block.hasPrefix("a\nb\tc"))
        #expect(block.contains("␇"))
    }

    @Test func bidiOverridesAndZeroWidthCharactersAreShownAsCodes() {
        let html = DisplayText.inline(Hostile.bidi).rendered
        #expect(html.invisibleScalars.isEmpty, "\(html.invisibleScalars)")
        for code in ["U+202E", "U+2066", "U+2069", "U+200B", "U+FEFF"] {
            #expect(html.contains(code), "\(code)")
        }
        // Right-to-left text itself is left alone, and the emoji joiner too.
        let arabic = "مرحبا 👨\u{200D}👩\u{200D}👧"
        #expect(DisplayText.inline(arabic).rendered == arabic)
    }

    @Test func invalidUTF8IsShownWithReplacementCharactersAndSaidToBeBinary() {
        let value = DisplayValue.make(Hostile.invalidUTF8, limits: .block, multiline: true)
        #expect(value.form == .textWithInvalidBytes(count: 3))
        #expect(value.body.rendered.hasPrefix("ok \u{FFFD}\u{FFFD} \u{FFFD}( still text here"))
        #expect(value.note?.rendered.contains("binary: not valid UTF-8, 3 invalid byte sequences") == true)
    }

    @Test func mostlyBinaryValuesAreShownAsHex() {
        var bytes = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 0x80) })
        bytes.replaceSubrange(0..<4, with: Data("<a>&".utf8))
        let value = DisplayValue.make(bytes, limits: .block, multiline: true)
        #expect(value.form == .hexDump)
        let lines = value.body.rendered.split(separator: "\n")
        #expect(lines.count == 19)  // 300 bytes, 16 a line
        #expect(lines[0].hasPrefix("00000000  3c 61 3e 26 "))
        #expect(lines[0].hasSuffix("|&lt;a&gt;&amp;............|"))
        #expect(value.note?.rendered == "binary: 300 bytes, shown as hex")
        // NUL-heavy but valid UTF-8 is binary too.
        #expect(DisplayValue.classify(Data(repeating: 0, count: 64)) == .hexDump)
        #expect(DisplayValue.classify(Data("plain\r\ntext\twith tabs\n".utf8)) == .text)
    }

    @Test func listCellsAreCutAt200Characters() {
        let html = DisplayText.inline(String(repeating: "é", count: 5000)).rendered
        #expect(html.occurrences(of: "é") == 200)
        #expect(html.contains("4800 more characters"))
        // A cell of controls is cut by its bytes of HTML too.
        #expect(DisplayText.inline(String(repeating: "\u{1}", count: 5000)).rendered.utf8.count < 2400 + 200)
    }
}

@Suite struct SizeTests {
    static let megabyte = Data(repeating: UInt8(ascii: "A"), count: 1_000_000)

    @Test func aOneMegabyteValueIsCutOnTheJobPage() async throws {
        let job = makeJob(7, input: Self.megabyte, result: Data("small".utf8))
        let detail = JobDetail(job: job, stages: [makeStage(0, value: Self.megabyte)])
        let page = await Dashboard(source: FixedSource(jobs: [job], details: [7: detail])).jobPage(id: "7")
        #expect(page.status == .ok)
        #expect(page.html.utf8.count < 200_000, "\(page.html.utf8.count) bytes")
        #expect(page.html.contains("cut: 912.6 KiB of 976.6 KiB not shown"))
        #expect(page.html.contains("jobctl status 7 --json prints it whole"))
        #expect(page.html.contains("small"))
    }

    @Test func aJobOfManyHugeStagesStaysWithinThePageBudget() async throws {
        let controls = Data(repeating: 0x01, count: 400_000) + Data(repeating: UInt8(ascii: "<"), count: 600_000)
        let stages = (0..<40).map {
            makeStage(
                $0, value: $0 % 2 == 0 ? Self.megabyte : controls, error: String(repeating: "<", count: 1_000_000))
        }
        let job = makeJob(9, input: Self.megabyte, error: String(repeating: "\u{202E}", count: 300_000))
        let page = await Dashboard(source: FixedSource(jobs: [job], details: [9: JobDetail(job: job, stages: stages)]))
            .jobPage(id: "9")
        #expect(page.html.utf8.count < JobDetailPage.pageBudget + 300_000, "\(page.html.utf8.count) bytes")
        #expect(page.html.contains("not shown: this page already shows 1.0 MiB of values"))
        #expect(page.html.invisibleScalars.isEmpty)
    }

    /// 30,000 stages of three attempts, 100,000 events and a 50 MB value:
    /// a page of the first 100 stages of each attempt shown, the latest 200
    /// events, and the value's beginning, each with a link to the rest.
    @Test func aJobOfManyStagesEventsAndAHugeValueIsABoundedPage() async throws {
        let stages = (0..<30_000).map { makeStage($0, name: "step-\($0)", value: Data("value \($0)".utf8)) }
        let huge = Data(repeating: UInt8(ascii: "h"), count: 50_000_000)
        let job = makeJob(5, result: huge, attempt: 3)
        let history = (1...2).map {
            JobAttempt(
                jobID: 5, attempt: $0, state: .rejected, result: nil, error: "try \($0)", startedAt: nil,
                finishedAt: nil, stages: stages)
        }
        let events = (1...100_000).map {
            JobEvent(
                id: Int64($0), jobID: 5, position: 0, kind: "retry", message: "retry number \($0)",
                createdAt: renderTime)
        }
        let source = FixedSource(
            jobs: [job], details: [5: JobDetail(job: job, stages: stages)], history: [5: history], events: [5: events])
        let dashboard = Dashboard(source: source)
        let page = await dashboard.jobPage(id: "5")
        #expect(page.status == .ok)
        #expect(page.html.utf8.count < 1_000_000, "\(page.html.utf8.count) bytes")
        #expect(page.html.occurrences(of: "<div class=\"stage\">") == 3 * JobDetailPage.stagesPerPage)
        #expect(page.html.contains("This page shows stages 0–99 of 30000."))
        #expect(page.html.contains("href=\"5?stage=100\""))
        #expect(page.html.occurrences(of: "retry number ") == JobDetailPage.maxEvents)
        #expect(page.html.contains("href=\"5?events-before=99801\""))
        #expect(page.html.contains("cut: 47.6 MiB of 47.7 MiB not shown"))
        #expect(page.html.contains("Open <a href=\"5/values/result\">the whole value</a>"))
        let whole = await dashboard.value(id: "5", name: "result")
        #expect(whole.status == .ok && whole.contentType == "text/plain; charset=utf-8" && whole.body == huge)
        #expect(await dashboard.value(id: "5", name: "stage-7-value").body == Data("value 7".utf8))
        for name in ["stage-30000-value", "stage-07-value", "attempt-0-result", "inputs", "stage--1-value"] {
            #expect(await dashboard.value(id: "5", name: name).status == .notFound, "\(name)")
        }

        let later = await dashboard.jobPage(id: "5", query: [("stage", "29950")])
        #expect(later.html.contains("29999. step-29999") && !later.html.contains("29949. step-29949"))
        #expect(later.html.contains("This page shows stages 29950–29999 of 30000."))
        let older = await dashboard.jobPage(id: "5", query: [("events-before", "201")])
        #expect(older.html.contains("retry number 1<") && older.html.contains("retry number 200<"))
        #expect(!older.html.contains("href=\"5?events-before="), "no events before the first")
        #expect(await dashboard.jobPage(id: "5", query: [("stage", "-1")]).status == .badRequest)
    }

    @Test func aOneMegabyteErrorIsOneShortCellInTheList() async throws {
        let job = makeJob(3, state: .rejected, error: String(repeating: "x", count: 1_000_000))
        let page = await Dashboard(source: FixedSource(jobs: [job])).jobsPage(query: [])
        #expect(page.html.utf8.count < 40_000)
        #expect(page.html.contains("999800 more characters"))
    }
}
