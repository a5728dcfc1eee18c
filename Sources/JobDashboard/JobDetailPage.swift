import Foundation
import JobStore

/// `/jobs/{id}`: the job's facts, its stages on a timeline, each stage's
/// value and error, its input and result, earlier attempts, and events.
///
/// Values are shown up to 64 KiB each, and up to ``pageBudget`` bytes of
/// values on the whole page (a job of many stages of 1 MiB each stays a
/// page a phone can load); what is cut says so, and that
/// `jobctl status ID --json` prints it whole.
enum JobDetailPage {
    struct Data {
        var detail: JobDetail
        var history: [JobAttempt]
        var events: [JobEvent]
        var snapshot: DashboardSnapshot
    }

    /// HTML bytes of values one page shows at most.
    static let pageBudget = 1024 * 1024
    /// Events one page shows at most, the latest (a stage retried a
    /// thousand times has a thousand).
    static let maxEvents = 200

    /// What is left of the page's budget for values, spent as they are shown.
    final class Budget {
        var remaining: Int
        init(_ bytes: Int) { remaining = bytes }
    }

    static func render(_ data: Data) -> HTML {
        let job = data.detail.job
        let now = data.snapshot.now
        let budget = Budget(pageBudget)
        let attempts = data.history.map { StageTimeline.Attempt(number: $0.attempt, isCurrent: false, stages: $0.stages) }
            + [StageTimeline.Attempt(number: job.attempt, isCurrent: true, stages: data.detail.stages)]
        var body: HTML = """
            <h1>Job \(job.id) · <a href="\(attribute: "../" + Layout.query([("definition", job.definition)]))">\
            \(job.definition, limit: 80)</a> \(Layout.badge(job.state.rawValue))</h1>
            <div class="cards"><div class="card">\(facts(job, now: now))</div></div>
            <h2>Timeline</h2>\(StageTimeline.render(attempts, now: now))
            <h2>Stages</h2>\(HTML.join(data.detail.stages.map { stage($0, job: job, now: now, budget: budget) }))
            <h2>Input</h2>\(block(job.input, job: job, budget: budget))
            """
        if let result = job.result { body += "<h2>Result</h2>\(block(result, job: job, budget: budget))" }
        if let error = job.error { body += "<h2>Error</h2>\(errorBlock(error, job: job, budget: budget))" }
        for attempt in data.history.reversed() {
            body += """
                <details><summary>Attempt \(attempt.attempt): \(Layout.badge(attempt.state.rawValue)) \
                finished \(DisplayTime.element(attempt.finishedAt, now: now))</summary>\
                \(HTML.join(attempt.stages.map { stage($0, job: job, now: now, budget: budget) }))\
                \(attempt.error.map { "<h3>Error</h3>" + errorBlock($0, job: job, budget: budget) } ?? "")</details>
                """
        }
        if !data.events.isEmpty {
            let shown = data.events.suffix(Self.maxEvents)
            let rows = shown.map { event -> HTML in
                """
                <tr><td data-label="When">\(DisplayTime.element(event.createdAt, now: now))</td>\
                <td data-label="Kind">\(event.kind, limit: 60)</td>\
                <td data-label="Stage">\(event.position.map(String.init) ?? "")</td>\
                <td data-label="Message">\(event.message, limit: 2000)</td></tr>
                """
            }
            let earlier: HTML = data.events.count > shown.count
                ? """
                    <p class="note">The \(shown.count) latest of \(data.events.count) events; \
                    jobctl status \(job.id) --json prints them all.</p>
                    """
                : ""
            body += """
                <h2>Events</h2>\(earlier)<table class="rows"><thead><tr><th>When</th><th>Kind</th><th>Stage</th>\
                <th>Message</th></tr></thead><tbody>\(HTML.join(rows))</tbody></table>
                """
        }
        return Layout.page(title: "Job \(job.id)", section: .none, base: "../", snapshot: data.snapshot, body: body)
    }

    static func facts(_ job: Job, now: Date) -> HTML {
        var items: [(String, HTML)] = [
            ("Definition", "\(job.definition)"), ("Pool", "\(job.pool)"), ("Attempt", "\(job.attempt)"),
            ("Priority", "\(job.priority)"), ("Claims", "\(job.claims)"),
            ("Created", DisplayTime.element(job.createdAt)), ("Run at", DisplayTime.element(job.runAt)),
            ("Started", DisplayTime.element(job.startedAt)), ("Finished", DisplayTime.element(job.finishedAt)),
        ]
        if let started = job.startedAt {
            items.append(("Ran", "\(DisplayTime.duration((job.finishedAt ?? now).timeIntervalSince(started)))"))
        }
        if let owner = job.leaseOwner { items.append(("Node", "\(owner)")) }
        if let key = job.idempotencyKey { items.append(("Key", "\(key)")) }
        if job.cancelRequested { items.append(("Cancel", "requested")) }
        return "<dl class=\"facts\">\(HTML.join(items.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }))</dl>"
    }

    static func stage(_ stage: Stage, job: Job, now: Date, budget: Budget) -> HTML {
        var meta: [HTML] = []
        if stage.attempts > 0 { meta.append("try \(stage.attempts)") }
        if let code = stage.exitCode { meta.append("exit status \(Int(code))") }
        if let started = stage.startedAt {
            meta.append("started \(DisplayTime.element(started))")
            meta.append("ran \(DisplayTime.duration((stage.finishedAt ?? now).timeIntervalSince(started)))")
        }
        if let code = stage.errorCode { meta.append("code \(code, limit: 60)") }
        var html: HTML = """
            <div class="stage"><h3>\(stage.position). \(stage.name, limit: 120) <span class="kind">\(stage.kind, limit: 20)</span> \
            \(Layout.badge(stage.state.rawValue))</h3><div class="meta">\(HTML.join(meta.enumerated().map { $0.offset == 0 ? $0.element : " · " + $0.element }))</div>
            """
        if let value = stage.value { html += block(value, job: job, budget: budget) }
        if let error = stage.error { html += errorBlock(error, job: job, budget: budget) }
        return html + "</div>"
    }

    /// A value in a `<pre>`, within the page's budget.
    static func block(_ value: Foundation.Data?, job: Job, budget: Budget) -> HTML {
        guard let value else { return "<p class=\"none\">none</p>" }
        guard budget.remaining > 0 else { return spent(value.count, job: job) }
        let limits = DisplayText.Limits(scalars: 65_536, bytes: min(DisplayText.Limits.block.bytes, budget.remaining))
        return shown(DisplayValue.make(value, limits: limits, multiline: true), error: false, job: job, budget: budget)
    }

    static func errorBlock(_ error: String, job: Job, budget: Budget) -> HTML {
        guard budget.remaining > 0 else { return spent(error.utf8.count, job: job) }
        let limits = DisplayText.Limits(scalars: 65_536, bytes: min(DisplayText.Limits.block.bytes, budget.remaining))
        let value = DisplayValue.make(Foundation.Data(error.utf8), limits: limits, multiline: true)
        return shown(value, error: true, job: job, budget: budget)
    }

    private static func shown(_ value: DisplayValue, error: Bool, job: Job, budget: Budget) -> HTML {
        budget.remaining -= value.body.rendered.utf8.count
        var html: HTML = "<pre class=\"v\(error ? " err" : "" as HTML)\">\(value.body)</pre>"
        if let note = value.note {
            let whole: HTML = value.isCut ? ". jobctl status \(job.id) --json prints it whole." : ""
            html += "<p class=\"note\">\(note)\(whole)</p>"
        }
        return html
    }

    private static func spent(_ bytes: Int, job: Job) -> HTML {
        """
        <p class="note">\(ByteCountText.bytes(bytes)) not shown: this page already shows \
        \(ByteCountText.bytes(pageBudget)) of values. jobctl status \(job.id) --json prints it.</p>
        """
    }
}
