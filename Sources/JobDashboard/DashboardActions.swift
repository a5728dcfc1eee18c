import Foundation
import JobStore

/// What the dashboard does when an operator acts: retry, cancel or delete
/// one job, or every job of a list's filter, through the store's
/// ``JobActionStore`` — so that each action is in the audit trail as
/// jobctl's are.
public struct DashboardActions: Sendable {
    let store: any JobActionStore
    let jobs: any JobStore
    /// The job a definition's schedule makes (its input; no instant yet),
    /// for "run now"; nil for a definition without a schedule.
    public var scheduleJob: @Sendable (String) -> NewJob? = { _ in nil }

    /// Bulk actions here change at most this many jobs per transaction.
    static let batchSize = 500

    public init(store: any JobActionStore, jobs: any JobStore) {
        self.store = store
        self.jobs = jobs
    }

    /// The store's actions, when it keeps an audit trail (both of jobd's stores do).
    public init?(_ store: any JobStore) {
        guard let actions = store as? any JobActionStore else { return nil }
        self.init(store: actions, jobs: store)
    }

    /// How many jobs `verb` would change for the list's filter.
    func count(_ verb: ActionVerb, _ request: JobListRequest, now: Date) async throws -> Int {
        try await store.countMatching(request.selection(now: now), for: verb, ids: 1...Int64.max).count
    }

    /// Applies `verb` to every job of the list's filter; gives the finished action.
    public func act(
        _ verb: ActionVerb, on request: JobListRequest, by actor: ActionActor, now: Date = Date()
    ) async throws -> ActionRecord {
        let request = request.pinned(now: now)
        let selection = request.selection(now: now)
        let (count, highest) = try await store.countMatching(selection, for: verb, ids: 1...Int64.max)
        var action = try await store.startAction(
            ActionStart(
                verb: verb, actor: actor, filter: request.filterText, selection: selection, matched: count,
                highestID: highest))
        while !action.isFinished { action = try await store.continueAction(action.id, batchSize: Self.batchSize) }
        return action
    }

    /// Applies `verb` to job `id`: true if it changed the job, false if the job is not in a state the verb
    /// takes (or is gone).
    public func act(_ verb: ActionVerb, job id: Int64, by actor: ActionActor) async throws -> Bool {
        let selection = JobSelection(jobID: id)
        var action = try await store.startAction(
            ActionStart(
                verb: verb, actor: actor, filter: "job \(id)", selection: selection, matched: 1, highestID: id))
        while !action.isFinished { action = try await store.continueAction(action.id, batchSize: 1) }
        return action.changed == 1
    }
}

extension JobListRequest {
    /// The list's filter as an action's selection, times counted from `now`.
    public func selection(now: Date) -> JobSelection {
        JobSelection(
            states: state.states, definition: definition, key: key, createdSince: since?.date(now: now),
            createdUntil: until?.date(now: now), match: match)
    }

    /// The filter as the dashboard's URL holds it, for the audit trail: `state=rejected&definition=report`.
    var filterText: String {
        let query = Layout.query(filterParameters)
        return query.hasPrefix("?") ? String(query.dropFirst()) : "all jobs"
    }

    /// Whether the list is narrowed at all: a bulk action needs a filter.
    var isFiltered: Bool { filterParameters.contains { $0.1 != nil } }
}

/// What the pages need to show an operator's forms: the CSRF token each form carries.
public struct ActionForms: Sendable, Hashable {
    public var csrf: String

    public init(csrf: String) {
        self.csrf = csrf
    }

    /// A button that POSTs `verb` to `action`, with the token.
    func button(_ verb: ActionVerb, action: String, hidden: [(String, String)] = []) -> HTML {
        button(verb.rawValue.capitalized, action: action, hidden: hidden)
    }

    /// A button labelled `label` that POSTs to `action` the hidden fields
    /// and `inputs` (`extra`: more fields, as HTML), with the token.
    func button(_ label: String, action: String, hidden: [(String, String)], extra: HTML = "") -> HTML {
        let fields = HTML.join(
            hidden.map { name, value -> HTML in
                "<input type=\"hidden\" name=\"\(attribute: name)\" value=\"\(attribute: value)\">"
            })
        return """
            <form method="post" action="\(attribute: action)" class="act">\
            <input type="hidden" name="csrf" value="\(attribute: csrf)">\(fields)\(extra)\
            <button type="submit">\(label)</button></form>
            """
    }
}
