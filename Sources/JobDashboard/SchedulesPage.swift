import Foundation
import JobStore

/// `/schedules`: each definition's schedule, its next and last fire times,
/// and the state of its last occurrence's job (`jobctl schedules`); a
/// paused one is marked. An operator (`forms`) gets "run now" and pause or
/// resume for each.
enum SchedulesPage {
    static func render(_ snapshot: DashboardSnapshot, forms: ActionForms? = nil) -> HTML {
        let now = snapshot.now
        let rows = soonestFirst(snapshot.schedules)
            .map { row -> HTML in
                let next: HTML =
                    row.nextFire.map {
                        "\(DisplayTime.element($0, now: now)) <span class=\"note\">\(DisplayTime.utc($0))</span>"
                    } ?? "<span class=\"none\">never</span>"
                let paused: HTML =
                    row.paused.map { pause -> HTML in
                        let until: HTML = pause.until.map { " until \(DisplayTime.utc($0))" } ?? ""
                        let why: HTML = pause.reason.map { ": \($0, limit: 120)" } ?? ""
                        return " <span class=\"state s-paused\">paused</span><span class=\"note\">\(until)\(why)</span>"
                    } ?? ""
                let acts: HTML = forms.map { Self.forms(row, $0) } ?? ""
                return """
                    <tr><td data-label="Definition"><a href="\(attribute: Layout.query([("definition", row.definition)]))">\
                    \(row.definition, limit: 80)</a></td>\
                    <td data-label="Schedule"><code>\(row.expression, limit: 120)</code></td>\
                    <td data-label="Next">\(next)</td>\
                    <td data-label="Last">\(DisplayTime.element(row.lastFired, now: now))</td>\
                    <td data-label="Last state">\(row.lastState.map { Layout.badge($0.rawValue) } ?? "<span class=\"none\">–</span>")\(paused)</td>\
                    \(acts)</tr>
                    """
            }
        let table: HTML =
            rows.isEmpty
            ? "<p class=\"none\">No definition has a schedule.</p>"
            : """
            <table class="rows"><thead><tr><th>Definition</th><th>Schedule</th><th>Next fire</th><th>Last fired</th>\
            <th>Last state</th>\(forms == nil ? HTML("") : HTML("<th>Actions</th>"))</tr></thead>\
            <tbody>\(HTML.join(rows))</tbody></table>
            """
        return Layout.page(
            title: "Schedules", section: .schedules, base: "", snapshot: snapshot, body: "<h1>Schedules</h1>\(table)")
    }
}

extension SchedulesPage {
    /// An operator's buttons for a schedule: run now, and pause (with a
    /// reason) or resume. Each POSTs to /schedules.
    static func forms(_ row: ScheduleRow, _ forms: ActionForms) -> HTML {
        let definition = [("definition", row.definition)]
        let run = forms.button("Run now", action: "schedules", hidden: [("verb", "run")] + definition)
        let toggle =
            row.paused == nil
            ? forms.button(
                "Pause", action: "schedules", hidden: [("verb", "pause")] + definition,
                extra: "<input type=\"text\" name=\"reason\" placeholder=\"reason\" maxlength=\"200\">")
            : forms.button("Resume", action: "schedules", hidden: [("verb", "resume")] + definition)
        return "<td data-label=\"Actions\">\(run)\(toggle)</td>"
    }

    /// The jobs page's card: the next fire times of the schedules that fire
    /// soonest. No card when no definition has a schedule (the Schedules
    /// page says so).
    static func card(_ snapshot: DashboardSnapshot, shown: Int = 5) -> HTML {
        let schedules = soonestFirst(snapshot.schedules)
        guard !schedules.isEmpty else { return "" }
        let rows = schedules.prefix(shown).map { row -> HTML in
            let next: HTML =
                row.nextFire.map { DisplayTime.element($0, now: snapshot.now) } ?? "<span class=\"none\">never</span>"
            return """
                <div class="line"><a href="\(attribute: Layout.query([("definition", row.definition)]))">\
                \(row.definition, limit: 60)</a><span>\(next)</span></div>
                """
        }
        let all: HTML = schedules.count > shown ? "all \(schedules.count) schedules »" : "schedules »"
        return """
            <div class="card"><h2>Schedules: next fires</h2>\(HTML.join(rows))\
            <div class="note"><a href="schedules">\(all)</a></div></div>
            """
    }

    /// Soonest next fire first; schedules that never fire again last.
    static func soonestFirst(_ schedules: [ScheduleRow]) -> [ScheduleRow] {
        schedules.sorted { ($0.nextFire ?? .distantFuture) < ($1.nextFire ?? .distantFuture) }
    }
}
