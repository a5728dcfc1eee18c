import Foundation
import JobStore

/// The operators' pages: the confirmation of an action on a list's whole selection.
extension Dashboard {
    /// `/actions?verb=…&state=…&definition=…` (any of the list's filter
    /// parameters): how many jobs the action would change, and the form that
    /// does it, its durations ago made instants. Changes nothing.
    public func confirmationPage(query: [(String, String)], forms: ActionForms) async -> DashboardPage {
        await gatedPage {
            let snapshot = await source.snapshot()
            guard let actions else {
                return .problem(.notFound, "No actions", "This dashboard changes nothing.", snapshot: snapshot)
            }
            let verb: ActionVerb
            let request: JobListRequest
            do throws(DashboardRequestError) {
                (verb, request) = try Self.bulkRequest(query)
            } catch {
                return .problem(.badRequest, "Bad request", error.message, snapshot: snapshot)
            }
            do {
                let pinned = request.pinned(now: snapshot.now)
                let count = try await actions.count(verb, pinned, now: snapshot.now)
                let fields =
                    [("verb", verb.rawValue)]
                    + pinned.filterParameters.compactMap { name, value in value.map { (name, $0) } }
                let list = Layout.query(request.filterParameters)
                var body: HTML = """
                    <h1>\(verb.rawValue.capitalized) \(count) \(count == 1 ? "job" : "jobs")?</h1>
                    <p>Every job of <a href="\(attribute: list)">the selection</a> (\(request.filterText)) \
                    that can be \(verb.pastTense): \(count) now. Each is changed once, in batches; \
                    the audit trail records who did it.</p>
                    """
                body +=
                    count > 0
                    ? forms.button(verb, action: "actions", hidden: fields) : "<p class=\"none\">Nothing to do.</p>"
                let html = Layout.page(title: "Confirm", section: .jobs, base: "", snapshot: snapshot, body: body)
                return DashboardPage(status: .ok, html: html.rendered)
            } catch {
                return .storeFailed(error, snapshot: snapshot)
            }
        }
    }

    /// The verb and the list's filter of a bulk action's query or form; a filter is required.
    public static func bulkRequest(
        _ items: [(String, String)]
    ) throws(DashboardRequestError) -> (ActionVerb, JobListRequest) {
        guard let text = items.first(where: { $0.0 == "verb" })?.1, let verb = ActionVerb(rawValue: text) else {
            throw DashboardRequestError("verb must be retry, cancel or delete")
        }
        let names: Set = ["state", "definition", "key", "since", "until", "match"]
        let request = try JobListRequest(query: items.filter { names.contains($0.0) })
        guard request.isFiltered else {
            throw DashboardRequestError(
                "an action on many jobs needs a filter: a state, a definition, a key, a time range or a search")
        }
        return (verb, request)
    }
}

/// What an operator's POST did: where to send the browser, or why nothing was done.
public enum ActionOutcome: Sendable, Hashable {
    /// Done (or nothing to do): redirect to `location`, relative to the request's path. `summary` is for the log.
    case done(location: String, summary: String)
    /// Nothing changed: the status (400, 404, 409, 503) and why.
    case refused(status: Int, message: String)
}

extension Dashboard {
    /// `POST /jobs/{id}/{verb}`: retry, cancel or delete one job, as
    /// `name` (uid `uid`, if known) from `origin`.
    public func act(
        onJob idText: String, verb verbText: String, name: String, uid: Int?, origin: String
    ) async
        -> ActionOutcome
    {
        guard let actions else { return .refused(status: 404, message: "This dashboard changes nothing.") }
        guard let id = Self.positiveNumber(idText), let verb = ActionVerb(rawValue: verbText) else {
            return .refused(status: 404, message: "No such action.")
        }
        let actor = ActionActor(name: name, uid: uid, origin: origin)
        do {
            guard try await actions.act(verb, job: id, by: actor) else {
                return .refused(
                    status: 409,
                    message: "Job \(id) cannot be \(verb.pastTense) now (it is gone, or its state does not allow it).")
            }
            return .done(location: "../\(id)", summary: "\(verb.pastTense) job \(id)")
        } catch {
            return .refused(status: 503, message: "The job store could not be written: \(error)")
        }
    }

    /// `POST /actions`: the verb on every job of the form's filter.
    public func act(
        onSelection form: [(String, String)], name: String, uid: Int?, origin: String
    ) async -> ActionOutcome {
        guard let actions else { return .refused(status: 404, message: "This dashboard changes nothing.") }
        let verb: ActionVerb
        let request: JobListRequest
        do throws(DashboardRequestError) {
            (verb, request) = try Self.bulkRequest(form)
        } catch {
            return .refused(status: 400, message: error.message)
        }
        do {
            let action = try await actions.act(verb, on: request, by: ActionActor(name: name, uid: uid, origin: origin))
            // `./?…`: a bare `?…` would resolve against /actions, not the list.
            let list = Layout.query(request.filterParameters)
            return .done(
                location: list.hasPrefix("?") ? "./" + list : list,
                summary: "\(verb.pastTense) \(action.changed) jobs (action \(action.id), \(request.filterText))")
        } catch {
            return .refused(status: 503, message: "The job store could not be written: \(error)")
        }
    }
}
