import Foundation
import JobStore

/// `/jobs/{id}`: the job's facts, its stages on a timeline, each stage's
/// value and error, its input and result, earlier attempts, and events.
///
/// Bounded whatever the job holds: a page shows ``stagesPerPage`` stages
/// (of each attempt) and ``maxEvents`` events, with links to the others;
/// the store reads no more than that, and each value's first 64 Ki
/// characters. Values are shown up to 64 KiB each, and up to
/// ``pageBudget`` bytes of values on the whole page (a job of many stages
/// of 1 MiB each stays a page a phone can load); what is cut says so, and
/// that `jobctl status ID --json` prints it whole.
enum JobDetailPage {
    struct Data: Sendable {
        var read: JobPageRead
        var query: JobPageQuery
        var snapshot: DashboardSnapshot
        /// Log lines of the stages shown, current attempt of the job.
        var log: [StageLogEntry] = []
        /// The visitor operates: the page shows the actions the job's state allows.
        var forms: ActionForms? = nil
        /// The job's child jobs (at most ``childrenRead``), in (stage, item) order.
        var children: [Job] = []
        /// Why the job waits, when it is pending.
        var wait: WaitReason? = nil
    }

    /// Child jobs one page reads (counted by state) and lists.
    static let childrenRead = 10_000
    static let childrenListed = 100

    /// Log lines one page reads at most (`jobctl logs ID` prints them all).
    static let logLines = 2_000
    /// Seconds between reloads of a running job's page.
    static let refreshSeconds = 2

    /// HTML bytes of values one page shows at most.
    static let pageBudget = 1024 * 1024
    /// Events one page shows at most (a stage retried a thousand times has a thousand).
    static let maxEvents = 200
    /// Stages one page shows, of the current attempt and of each earlier one.
    static let stagesPerPage = 100
    /// Earlier attempts one page shows, the latest.
    static let attemptsShown = 10
    /// Characters of a name, event kind or message the store reads.
    static let textCharacters = 2_048

    /// What the page of job `id` reads, before the request's paging.
    static func query(id: Int64) -> JobPageQuery {
        JobPageQuery(
            // One event more than shown: whether there are older ones.
            id: id, stageLimit: stagesPerPage, eventLimit: maxEvents + 1, attemptLimit: attemptsShown,
            valueCharacters: DisplayText.Limits.block.scalars, textCharacters: textCharacters)
    }

    /// What is left of the page's budget for values, spent as they are shown.
    final class Budget {
        var remaining: Int
        init(_ bytes: Int) { remaining = bytes }
    }

    typealias Place = JobPageRead.ValuePlace

    static func render(_ data: Data) -> HTML {
        let read = data.read
        let job = read.job
        let now = data.snapshot.now
        let budget = Budget(pageBudget)
        let whole = read.wholeBytes
        let attempts =
            read.history.map { StageTimeline.Attempt(number: $0.attempt, isCurrent: false, stages: $0.stages) }
            + [StageTimeline.Attempt(number: job.attempt, isCurrent: true, stages: read.stages)]
        let stageNavigation = stagePages(data)
        var body: HTML = """
            <h1>Job \(job.id) · <a href="\(attribute: "../" + Layout.query([("definition", job.definition)]))">\
            \(job.definition, limit: 80)</a> \(Layout.badge(job.state.rawValue))</h1>
            \(actionButtons(job, data.forms))<div class="cards"><div class="card">\(facts(job, now: now, wait: data.wait))</div></div>
            <h2>Timeline</h2>\(stageNavigation)\(StageTimeline.render(attempts, now: now))
            <h2>Stages</h2>\(stageNavigation)\(HTML.join(read.stages.map { stage($0, attempt: nil, job: job, now: now, budget: budget, whole: whole) + log(of: $0, data) }))
            \(childrenSection(data.children))<h2>Input</h2>\(block(job.input, job: job, budget: budget, at: .input, whole: whole))
            """
        if let result = job.result {
            body += "<h2>Result</h2>\(block(result, job: job, budget: budget, at: .result, whole: whole))"
        }
        if let error = job.error {
            body += "<h2>Error</h2>\(errorBlock(error, job: job, budget: budget, at: .error, whole: whole))"
        }
        if read.attemptCount > read.history.count {
            body += """
                <p class="note">The \(read.history.count) latest of \(read.attemptCount) earlier attempts; \
                jobctl status \(job.id) --json prints them all.</p>
                """
        }
        for attempt in read.history.reversed() {
            let number = attempt.attempt
            body += """
                <details><summary>Attempt \(number): \(Layout.badge(attempt.state.rawValue)) \
                finished \(DisplayTime.element(attempt.finishedAt, now: now))</summary>\
                \(HTML.join(attempt.stages.map { stage($0, attempt: number, job: job, now: now, budget: budget, whole: whole) }))\
                \(attempt.error.map { "<h3>Error</h3>" + errorBlock($0, job: job, budget: budget, at: .attemptError(number), whole: whole) } ?? "")</details>
                """
        }
        if read.eventCount > 0 { body += events(data) }
        let running = job.state == .running || job.state == .pending
        return Layout.page(
            title: "Job \(job.id)", section: .none, base: "../", snapshot: data.snapshot, body: body,
            refresh: running ? refreshSeconds : nil)
    }

    /// What `stage` wrote to stderr, and to stdout where that is not its
    /// value (each attempt: its lines, with the time of each), within the
    /// page's bounds.
    static func log(of stage: Stage, _ data: Data) -> HTML {
        let entries = data.log.filter { $0.cursor.position == stage.position }
        let job = data.read.job
        let running = stage.state == .running
        guard !entries.isEmpty || running else { return "" }
        var html: HTML = ""
        let attempts = Dictionary(grouping: entries, by: \.cursor.attempt)
        for attempt in attempts.keys.sorted() {
            let lines = attempts[attempt] ?? []
            var body: HTML = ""
            for entry in lines {
                body += "<span class=\"t\">\(DisplayTime.lineTime(entry.at))</span> "
                switch entry.content {
                case let .line(bytes):
                    // Stdout kept in the log (its stage's stdout is not the value) is marked.
                    if entry.stream == .stdout { body += "<span class=\"out\">stdout</span> " }
                    body += LogLineText.html(bytes)
                case let .dropped(count, bytes):
                    body +=
                        "<span class=\"cut\">… \(count) lines (\(ByteCountText.bytes(bytes))) dropped: over the stage's logs max …</span>"
                }
                body += "\n"
            }
            html += """
                <details open><summary>Log, attempt \(attempt) (\(lines.count) lines)</summary>\
                <pre class="log">\(body)</pre></details>
                """
        }
        if data.log.count > logLines {
            html +=
                "<p class=\"note\">This page shows the first \(logLines) log lines; jobctl logs \(job.id) prints them all.</p>"
        }
        if running {
            html += """
                <p class="note">Running: this page reloads every \(refreshSeconds) s \
                (<a href="\(attribute: "\(job.id)")">reload now</a>); jobctl logs \(job.id) --follow streams it.</p>
                """
        }
        return html
    }

    /// Retry and delete for an ended job, cancel for a pending or running one.
    static func actionButtons(_ job: Job, _ forms: ActionForms?) -> HTML {
        guard let forms else { return "" }
        let verbs: [ActionVerb] = job.state.isResolved ? [.retry, .delete] : [.cancel]
        let buttons = verbs.map { forms.button($0, action: "\(job.id)/\($0.rawValue)") }
        return "<div class=\"actions\">\(HTML.join(buttons))</div>"
    }

    /// `/jobs/ID` with `items` as its query, relative to the job's page.
    static func link(_ id: Int64, _ items: [(String, String?)]) -> String {
        let query = Layout.query(items)
        return "\(id)" + (query == "./" ? "" : query)
    }

    /// Which stages this page shows, and links to the pages before and after.
    static func stagePages(_ data: Data) -> HTML {
        let read = data.read
        let first = data.query.firstStage
        let limit = data.query.stageLimit
        guard read.stageCount > limit || first > 0 else { return "" }
        let id = read.job.id
        var links: [HTML] = []
        if first > 0 {
            let earlier = max(0, first - limit)
            links.append(
                "<a href=\"\(attribute: link(id, [("stage", earlier == 0 ? nil : String(earlier))]))\">« stages \(earlier)–\(first - 1)</a>"
            )
        }
        if first + limit < read.stageCount {
            let later = first + limit
            links.append(
                "<a href=\"\(attribute: link(id, [("stage", String(later))]))\">stages \(later)–\(min(read.stageCount, later + limit) - 1) »</a>"
            )
        }
        let shown: HTML =
            read.stages.isEmpty
            ? "no stage from position \(first)"
            : "stages \(first)–\(first + read.stages.count - 1)"
        return """
            <p class="note">This page shows \(shown) of \(read.stageCount). \
            \(HTML.join(links.enumerated().map { $0.offset == 0 ? $0.element : " · " + $0.element }))</p>
            """
    }

    /// The events asked for, with a link to the older ones.
    static func events(_ data: Data) -> HTML {
        let read = data.read
        let job = read.job
        let now = data.snapshot.now
        let shown = read.events.suffix(maxEvents)
        let rows = shown.map { event -> HTML in
            """
            <tr><td data-label="When">\(DisplayTime.element(event.createdAt, now: now))</td>\
            <td data-label="Kind">\(event.kind, limit: 60)</td>\
            <td data-label="Stage">\(event.position.map(String.init) ?? "")</td>\
            <td data-label="Message">\(event.message, limit: 2000)</td></tr>
            """
        }
        var note: HTML = ""
        if read.eventCount > shown.count {
            let which: HTML =
                data.query.eventsBefore == nil
                ? "The \(shown.count) latest of \(read.eventCount) events"
                : "\(shown.count) of \(read.eventCount) events"
            var links: [HTML] = []
            if let oldest = shown.first, read.events.count > shown.count {
                links.append(
                    "<a href=\"\(attribute: link(job.id, [("events-before", String(oldest.id))]))\">older events »</a>")
            }
            if data.query.eventsBefore != nil {
                links.append("<a href=\"\(attribute: link(job.id, []))\">the latest events</a>")
            }
            note = """
                <p class="note">\(which); jobctl status \(job.id) --json prints them all. \
                \(HTML.join(links.enumerated().map { $0.offset == 0 ? $0.element : " · " + $0.element }))</p>
                """
        }
        return """
            <h2>Events</h2>\(note)<table class="rows"><thead><tr><th>When</th><th>Kind</th><th>Stage</th>\
            <th>Message</th></tr></thead><tbody>\(HTML.join(rows))</tbody></table>
            """
    }

    static func facts(_ job: Job, now: Date, wait: WaitReason? = nil) -> HTML {
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
        if let parent = job.parentID {
            let stage: HTML = job.parentStage.map { ", stage \($0)" } ?? ""
            let item: HTML = job.itemIndex.map { ", item \($0)" } ?? ""
            items.append(("Parent", "<a href=\"\(attribute: "jobs/\(parent)")\">job \(parent)</a>\(stage)\(item)"))
        }
        if let wait {
            items.append(("Waiting", "<span class=\"why\">\(wait.long, limit: 300)</span>"))
        } else if job.waitingOn > 0 {
            items.append(("Waiting", "for \(job.waitingOn) jobs"))
        }
        return "<dl class=\"facts\">\(HTML.join(items.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }))</dl>"
    }

    /// The job's child jobs: how many in each state, then the first
    /// ``childrenListed``, each linked to its page.
    static func childrenSection(_ children: [Job]) -> HTML {
        guard !children.isEmpty else { return "" }
        let byState = Dictionary(grouping: children, by: \.state)
        let counts = JobState.allCases.compactMap { state -> HTML? in
            byState[state].map { "\(Layout.badge(state.rawValue)) \($0.count)" }
        }
        let more = children.count >= childrenRead ? " (the first \(childrenRead))" : ""
        let rows = children.prefix(childrenListed).map { child -> HTML in
            """
            <tr><td><a href="\(attribute: "jobs/\(child.id)")">\(child.id)</a></td>\
            <td>\(child.parentStage.map(String.init) ?? "")</td><td>\(child.itemIndex.map(String.init) ?? "")</td>\
            <td>\(Layout.badge(child.state.rawValue))</td><td>\(child.error ?? "", limit: 200)</td></tr>
            """
        }
        let listed =
            children.count > childrenListed
            ? "<p class=\"note\">The first \(childrenListed); jobctl list --parent ID lists them all.</p>" as HTML : ""
        return """
            <h2>Children</h2><p>\(children.count)\(more): \(HTML.join(counts.enumerated().map { $0.offset == 0 ? $0.element : " · " + $0.element }))</p>\
            <table><tr><th>Job</th><th>Stage</th><th>Item</th><th>State</th><th>Error</th></tr>\(HTML.join(rows))</table>\(listed)
            """
    }

    static func stage(_ stage: Stage, attempt: Int?, job: Job, now: Date, budget: Budget, whole: [Place: Int]) -> HTML {
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
        if let value = stage.value {
            html += block(
                value, job: job, budget: budget, at: .stageValue(attempt: attempt, position: stage.position),
                whole: whole)
        }
        if let error = stage.error {
            html += errorBlock(
                error, job: job, budget: budget, at: .stageError(attempt: attempt, position: stage.position),
                whole: whole)
        }
        return html + "</div>"
    }

    /// A value in a `<pre>`, within the page's budget.
    /// The value at `place`: `whole` has its whole size when `value` is its beginning.
    static func block(_ value: Foundation.Data?, job: Job, budget: Budget, at place: Place, whole: [Place: Int]) -> HTML
    {
        guard let value else { return "<p class=\"none\">none</p>" }
        guard budget.remaining > 0 else { return spent(max(value.count, whole[place] ?? 0), job: job, at: place) }
        let limits = DisplayText.Limits(scalars: 65_536, bytes: min(DisplayText.Limits.block.bytes, budget.remaining))
        let shownValue = DisplayValue.make(value, limits: limits, multiline: true, wholeBytes: whole[place])
        return shown(shownValue, error: false, job: job, budget: budget, at: place)
    }

    static func errorBlock(_ error: String, job: Job, budget: Budget, at place: Place, whole: [Place: Int]) -> HTML {
        guard budget.remaining > 0 else { return spent(max(error.utf8.count, whole[place] ?? 0), job: job, at: place) }
        let limits = DisplayText.Limits(scalars: 65_536, bytes: min(DisplayText.Limits.block.bytes, budget.remaining))
        let value = DisplayValue.make(
            Foundation.Data(error.utf8), limits: limits, multiline: true, wholeBytes: whole[place])
        return shown(value, error: true, job: job, budget: budget, at: place)
    }

    /// A link to the whole value at `place` (`/jobs/ID/values/NAME`).
    static func wholeLink(_ job: Job, _ place: Place) -> HTML {
        "<a href=\"\(attribute: "\(job.id)/values/\(place.name)")\">the whole value</a>"
    }

    private static func shown(_ value: DisplayValue, error: Bool, job: Job, budget: Budget, at place: Place) -> HTML {
        budget.remaining -= value.body.rendered.utf8.count
        var html: HTML = "<pre class=\"v\(error ? " err" : "" as HTML)\">\(value.body)</pre>"
        if let note = value.note {
            let whole: HTML =
                value.isCut
                ? ". Open \(wholeLink(job, place)); jobctl status \(job.id) --json prints it whole too." : ""
            html += "<p class=\"note\">\(note)\(whole)</p>"
        }
        return html
    }

    private static func spent(_ bytes: Int, job: Job, at place: Place) -> HTML {
        """
        <p class="note">\(ByteCountText.bytes(bytes)) not shown: this page already shows \
        \(ByteCountText.bytes(pageBudget)) of values. Open \(wholeLink(job, place)); \
        jobctl status \(job.id) --json prints it too.</p>
        """
    }
}
