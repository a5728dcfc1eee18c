import Foundation
import JobStore

/// Pausing and resuming pools and definitions from the pages: `POST
/// /pauses` with `do` (pause or resume), `scope` (pool or definition),
/// `name`, and for a pause `for` (one of ``PauseForms/durations``, empty:
/// until resumed) and `reason`. The pause is stored as `jobctl pause`
/// stores it (every host obeys it), with the operator as its actor, and the
/// audit trail records it (and each resume) as jobctl does: an `actions`
/// row and an event of no job.
extension Dashboard {
    public func act(
        onPause form: [(String, String)], name actorName: String, uid: Int?, origin: String
    ) async -> ActionOutcome {
        guard let actions else { return .refused(status: 404, message: "This dashboard changes nothing.") }
        let request: PauseRequest
        do throws(DashboardRequestError) {
            request = try PauseRequest(form)
        } catch {
            return .refused(status: 400, message: error.message)
        }
        let actor = ActionActor(name: actorName, uid: uid, origin: origin)
        let back =
            request.scope == .definition ? "./" + Layout.query([("definition", request.name)]) : "./"
        do {
            if request.pause {
                let until = request.duration.map { Date().addingTimeInterval($0) }
                let pause = try await actions.pause(
                    Pause(
                        scope: request.scope, name: request.name, reason: request.reason, actor: actor.description,
                        until: until),
                    by: actor
                ).pause
                let summary =
                    "paused \(request.scope.rawValue) \(request.name)"
                    + (pause.until.map { " until \(Timestamp.text($0))" } ?? "")
                return .done(location: back, summary: summary)
            }
            let resumed = try await actions.resume(request.scope, name: request.name, by: actor).resumed
            return .done(
                location: back,
                summary: resumed
                    ? "resumed \(request.scope.rawValue) \(request.name)"
                    : "resumed \(request.scope.rawValue) \(request.name), which was not paused")
        } catch {
            return .refused(status: 503, message: "The job store could not be written: \(error)")
        }
    }
}

/// A `POST /pauses` form, checked.
struct PauseRequest: Sendable, Hashable {
    var pause: Bool
    var scope: PauseScope
    var name: String
    /// Seconds; nil: until resumed.
    var duration: TimeInterval?
    var reason: String?

    static let maxName = 200
    static let maxReason = 500

    init(_ form: [(String, String)]) throws(DashboardRequestError) {
        func field(_ name: String) -> String? { form.first { $0.0 == name }?.1 }
        switch field("do") {
        case "pause": pause = true
        case "resume": pause = false
        default: throw DashboardRequestError("do must be pause or resume")
        }
        switch field("scope") {
        case "pool": scope = .pool
        case "definition": scope = .definition
        default: throw DashboardRequestError("scope must be pool or definition")
        }
        guard let name = field("name"), !name.isEmpty, name.count <= Self.maxName else {
            throw DashboardRequestError(
                "name must be the pool's or the definition's name (at most \(Self.maxName) characters)")
        }
        self.name = name
        let choice = field("for") ?? ""
        guard let duration = PauseForms.durations.first(where: { $0.value == choice }) else {
            throw DashboardRequestError(
                "for must be one of "
                    + PauseForms.durations.map { $0.value.isEmpty ? "empty" : $0.value }.joined(separator: ", "))
        }
        self.duration = duration.seconds
        let reason = (field("reason") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard reason.count <= Self.maxReason else {
            throw DashboardRequestError("reason holds at most \(Self.maxReason) characters")
        }
        self.reason = reason.isEmpty ? nil : reason
    }
}

extension DashboardActions {
    /// Stores `pause` (made by `actor`) and records it in the audit trail
    /// as `jobctl pause` does: an event of no job and a `pause` action.
    /// Gives the pause as stored and the action's id (nil for a store
    /// without operator actions).
    func pause(_ pause: Pause, by actor: ActionActor) async throws -> (pause: Pause, action: Int64?) {
        let stored = try await jobs.pause(pause)
        try await jobs.recordEvent(stored.madeEvent)
        return (stored, try await record(.pause, stored.scope, stored.name, by: actor))
    }

    /// Removes the pause (a schedule's: ended, for its catch-up) and
    /// records the resume as `jobctl resume` does; whether a pause held,
    /// and the action's id.
    func resume(
        _ scope: PauseScope, name: String, by actor: ActionActor
    ) async throws -> (resumed: Bool, action: Int64?) {
        guard try await jobs.resume(scope, name: name) != nil else { return (false, nil) }
        let action = try await record(.resume, scope, name, by: actor)
        try await jobs.recordEvent(Pause.resumedEvent(scope, name: name, by: actor.description))
        return (true, action)
    }

    /// The `actions` row of a pause or a resume: `filter` names what, as
    /// jobctl writes it (`pool reports`, `schedule nightly`).
    private func record(
        _ verb: OperatorVerb, _ scope: PauseScope, _ name: String, by actor: ActionActor
    ) async throws -> Int64? {
        guard let runs = jobs as? any JobScheduleRunStore else { return nil }
        return try await runs.recordOperatorAction(
            verb, filter: "\(scope.rawValue) \(name)", definition: scope == .pool ? nil : name, by: actor)
    }
}

/// The pause and resume forms, and how a pause is shown.
enum PauseForms {
    /// The choices of a pause's length: the `for` field's value, its label, its seconds (nil: until resumed).
    static let durations: [(value: String, label: String, seconds: TimeInterval?)] = [
        ("", "until resumed", nil), ("15m", "for 15 min", 900), ("1h", "for 1 hour", 3600),
        ("4h", "for 4 hours", 14_400), ("1d", "for 1 day", 86_400),
    ]

    static func hidden(_ forms: ActionForms, _ action: String, _ scope: PauseScope, _ name: String) -> HTML {
        """
        <input type="hidden" name="csrf" value="\(attribute: forms.csrf)">\
        <input type="hidden" name="do" value="\(attribute: action)">\
        <input type="hidden" name="scope" value="\(attribute: scope.rawValue)">\
        <input type="hidden" name="name" value="\(attribute: name)">
        """
    }

    /// A form that pauses `name`: a length and a reason. `base`: the page's way to the top (`""`, `"../"`).
    static func pause(_ scope: PauseScope, _ name: String, _ forms: ActionForms, base: String = "") -> HTML {
        let options = HTML.join(durations.map { "<option value=\"\(attribute: $0.value)\">\($0.label)</option>" })
        return """
            <form method="post" action="\(attribute: base + "pauses")" class="act pause">\
            \(hidden(forms, "pause", scope, name))<select name="for" aria-label="How long">\(options)</select>\
            <input type="text" name="reason" maxlength="\(PauseRequest.maxReason)" placeholder="reason" \
            aria-label="Reason" autocomplete="off"><button type="submit">Pause</button></form>
            """
    }

    static func resume(_ scope: PauseScope, _ name: String, _ forms: ActionForms, base: String = "") -> HTML {
        """
        <form method="post" action="\(attribute: base + "pauses")" class="act pause">\
        \(hidden(forms, "resume", scope, name))<button type="submit">Resume</button></form>
        """
    }

    /// "paused by … until …: reason", marked.
    static func mark(_ pause: Pause) -> HTML {
        let until = pause.until.map { "until \(DisplayTime.utc($0))" as HTML } ?? "until resumed"
        let reason: HTML = pause.reason.map { ": \($0, limit: 200)" } ?? ""
        return
            "<span class=\"state s-paused\">paused</span> <span class=\"note\">by \(pause.actor, limit: 120) \(until)\(reason)</span>"
    }

    /// The pauses that hold: each marked, with a resume button for an operator.
    static func card(_ pauses: [Pause], _ forms: ActionForms?) -> HTML {
        guard !pauses.isEmpty else { return "" }
        let rows = pauses.map { pause -> HTML in
            """
            <div class="line"><span>\(pause.scope.rawValue) <b>\(pause.name, limit: 80)</b></span>\
            \(forms.map { resume(pause.scope, pause.name, $0) } ?? "")</div><div>\(mark(pause))</div>
            """
        }
        return "<div class=\"card paused\"><h2>Paused</h2>\(HTML.join(rows))</div>"
    }

    /// Above a list filtered by one definition: whether it is paused, and the form that pauses or resumes it.
    static func definitionLine(_ definition: String, _ pauses: [Pause], _ forms: ActionForms?) -> HTML {
        let pause = pauses.first { $0.scope == .definition && $0.name == definition }
        var line: HTML = "<div class=\"line definition\"><span>Definition <b>\(definition, limit: 80)</b> "
        line += pause.map(mark) ?? "<span class=\"note\">claimed as usual</span>"
        line += "</span>"
        if let forms {
            line += pause == nil ? Self.pause(.definition, definition, forms) : resume(.definition, definition, forms)
        }
        return line + "</div>"
    }
}
