import Foundation
import JobStore

/// `/`: the state counts, the pools, the next schedules, the
/// resolved-per-minute chart, and a page of jobs with filters.
enum JobListPage {
    struct Data {
        var request: JobListRequest
        var page: JobPage
        var counts: [JobState: Int]
        var poolCounts: [PoolJobCounts]
        var resolved: [ResolvedMinute]
        var snapshot: DashboardSnapshot
        /// The visitor operates: the list offers actions on its whole selection.
        var forms: ActionForms? = nil
        /// Why each pending job of the page waits.
        var waits: [Int64: WaitReason] = [:]
        /// The pauses that hold now.
        var pauses: [Pause] = []
    }

    static func render(_ data: Data) -> HTML {
        let schedules = SchedulesPage.card(data.snapshot)
        // With the schedules card there are four; the chart keeps a wider column.
        let cards: HTML = data.snapshot.schedules.isEmpty ? "cards" : "cards four"
        let body: HTML = """
            <div class="\(cards)">\(countsCard(data.counts))\
            \(PoolsCard.render(data.snapshot.pools, data.poolCounts, pauses: data.pauses, forms: data.forms))\
            \(schedules)<div class="card"><h2>Resolved per minute, last hour</h2>\
            \(ResolvedChart.render(data.resolved, now: data.snapshot.now))</div>\(PauseForms.card(data.pauses, data.forms))</div>
            <h2>Jobs</h2>
            \(filters(data.request))\(definitionLine(data))\(selectionActions(data.request, data.forms))
            \(unreadable(data.page.unreadable))\(table(data.page.jobs, now: data.snapshot.now, waits: data.waits))
            \(pager(data.request, data.page))
            """
        return Layout.page(title: "Jobs", section: .jobs, base: "", snapshot: data.snapshot, body: body)
    }

    /// A list of one definition says whether it is paused, with the form that pauses or resumes it.
    static func definitionLine(_ data: Data) -> HTML {
        guard let definition = data.request.definition else { return "" }
        return PauseForms.definitionLine(definition, data.pauses, data.forms)
    }

    /// Links to the confirmation page of each action on the whole selection (a filtered list only): the
    /// same filter parameters, so that the action counts and changes exactly the jobs the list selects.
    static func selectionActions(_ request: JobListRequest, _ forms: ActionForms?) -> HTML {
        guard forms != nil, request.isFiltered else { return "" }
        let links = ActionVerb.allCases.map { verb -> HTML in
            let query = Layout.query([("verb", verb.rawValue)] + request.filterParameters)
            return "<a href=\"\(attribute: "actions" + query)\">\(verb.rawValue.capitalized) the selection…</a>"
        }
        return "<p class=\"actions\">\(HTML.join(links))</p>"
    }

    static func countsCard(_ counts: [JobState: Int]) -> HTML {
        let items = JobState.allCases.map { state -> HTML in
            let link = Layout.query([("state", state.rawValue)])
            return "<a href=\"\(attribute: link)\"><b>\(counts[state] ?? 0)</b>\(Layout.badge(state.rawValue))</a>"
        }
        return "<div class=\"card\"><h2>Jobs in the store</h2><div class=\"counts\">\(HTML.join(items))</div></div>"
    }

    /// The filter as a plain GET form: each field holds the request's value, so the URL is the whole view.
    static func filters(_ request: JobListRequest) -> HTML {
        let choices: [(String, String)] =
            [("all", "all"), ("unresolved", "pending + running"), ("resolved", "resolved")]
            + JobState.allCases.map { ($0.rawValue, $0.rawValue) }
        let selected = request.state.parameter ?? "all"
        let options = HTML.join(
            choices.map { value, label -> HTML in
                "<option value=\"\(attribute: value)\"\(value == selected ? " selected" : "" as HTML)>\(label)</option>"
            })
        func field(
            _ label: String, _ name: String, _ value: String?, _ placeholder: String, type: String = "text"
        )
            -> HTML
        {
            """
            <label>\(label)<input type="\(attribute: type)" name="\(attribute: name)" value="\(attribute: value ?? "")" \
            placeholder="\(attribute: placeholder)" maxlength="\(JobListRequest.maxFieldLength)" autocomplete="off"></label>
            """
        }
        let limit: HTML =
            request.limit == 50 ? "" : "<input type=\"hidden\" name=\"limit\" value=\"\(request.limit)\">"
        return """
            <form class="filters" method="get" action="./" role="search">
            <label>State<select name="state">\(options)</select></label>
            \(field("Definition", "definition", request.definition, "any"))\
            \(field("Key", "key", request.key, "any"))\
            \(field("Created since", "since", request.since?.text, "1h or 2026-11-24T09:00:00Z"))\
            \(field("Created until", "until", request.until?.text, "30m or an RFC 3339 time"))\
            \(field("Search", "match", request.match, "words of input, result, error, key", type: "search"))\
            \(limit)<button type="submit">Filter</button>\
            \(request.isFiltered ? "<a class=\"clear\" href=\"./\">Clear</a>" : "" as HTML)</form>
            """
    }

    static func table(_ jobs: [Job], now: Date, waits: [Int64: WaitReason] = [:]) -> HTML {
        guard !jobs.isEmpty else { return "<p class=\"none\">No jobs match.</p>" }
        let rows = jobs.map { job -> HTML in
            let link = "jobs/\(job.id)"
            // Empty cells, not dashes: a phone's card leaves them out.
            var ran: HTML = ""
            if let started = job.startedAt {
                let end = job.finishedAt ?? now
                ran =
                    "\(DisplayTime.duration(max(0, end.timeIntervalSince(started))))\(job.finishedAt == nil ? " so far" : "" as HTML)"
            }
            return """
                <tr><td class="num" data-label="ID"><a href="\(attribute: link)">\(job.id)</a></td>\
                <td data-label="Definition"><a href="\(attribute: Layout.query([("definition", job.definition)]))">\
                \(job.definition, limit: 80)</a></td>\
                <td data-label="State">\(Layout.badge(job.state.rawValue))\(waitNote(waits[job.id]))</td>\
                <td class="num" data-label="Attempt">\(job.attempt)</td>\
                <td data-label="Created">\(DisplayTime.element(job.createdAt, now: now))</td>\
                <td data-label="Started">\(job.startedAt.map { DisplayTime.element($0, now: now) } ?? "")</td>\
                <td class="num" data-label="Ran">\(ran)</td>\
                <td data-label="Finished">\(job.finishedAt.map { DisplayTime.element($0, now: now) } ?? "")</td>\
                <td class="err" data-label="Error">\(firstLine(job.error))</td></tr>
                """
        }
        return """
            <table class="rows"><thead><tr><th>ID</th><th>Definition</th><th>State</th><th>Attempt</th>\
            <th>Created</th><th>Started</th><th>Ran</th><th>Finished</th><th>Error</th></tr></thead>
            <tbody>\(HTML.join(rows))</tbody></table>
            """
    }

    /// Why a pending job waits, in a few words (the sentence on hover and on the job's page).
    static func waitNote(_ wait: WaitReason?) -> HTML {
        guard let wait else { return "" }
        return
            " <span class=\"why note\" title=\"\(attribute: String(wait.long.prefix(300)))\">\(wait.short, limit: 60)</span>"
    }

    /// Rows of this page that the store could not read (written by hand,
    /// docs/schema.md): said above the table, which leaves them out, so that
    /// no job goes missing from the list without a word.
    static func unreadable(_ rows: [UnreadableRow]) -> HTML {
        guard !rows.isEmpty else { return "" }
        let items = rows.prefix(20).map { row -> HTML in "<li>\(row.message, limit: 300)</li>" }
        let more: HTML = rows.count > 20 ? "<li>and \(rows.count - 20) more</li>" : ""
        return """
            <div class="card"><h2>\(rows.count) \(rows.count == 1 ? "row" : "rows") of this page could not be read \
            and \(rows.count == 1 ? "is" : "are") left out</h2><ul>\(HTML.join(items))\(more)</ul></div>
            """
    }

    /// The first line of an error that has text (200 characters at most).
    static func firstLine(_ error: String?) -> HTML {
        guard let error else { return "" }
        let line = error.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        return DisplayText.inline(line)
    }

    static func pager(_ request: JobListRequest, _ page: JobPage) -> HTML {
        var links: [HTML] = []
        if request.before != nil { links.append("<a href=\"\(attribute: request.link(before: nil))\">« Newest</a>") }
        if let cursor = page.nextCursor {
            links.append("<a href=\"\(attribute: request.link(before: cursor))\">Older »</a>")
        }
        return links.isEmpty ? "" : "<div class=\"pager\">\(HTML.join(links))</div>"
    }
}
