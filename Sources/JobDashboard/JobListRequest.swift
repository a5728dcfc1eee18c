import Foundation
import JobCalendar
public import JobStore
import JobValues

/// The jobs list's query string, as `jobctl` takes its filter options:
/// `state` (`unresolved` = pending + running, `resolved`, or one state),
/// `definition`, `key` (the idempotency key, exactly), `since` and `until`
/// (creation time: RFC 3339, or a duration ago such as `1h`), `match` (words
/// of the input, result, error or key, through the store's search index),
/// `limit` (1…200, default 50) and `before` (the cursor of the previous
/// page: only older jobs). The whole view lives in the URL, so a link to it
/// shows the same selection later; a duration ago is counted from each
/// request.
public struct JobListRequest: Sendable, Hashable {
    public enum StateFilter: Sendable, Hashable {
        case all
        /// Pending and running: `jobctl list --pending`.
        case unresolved
        /// Fulfilled, rejected and cancelled: `jobctl list --resolved`.
        case resolved
        case only(JobState)

        var parameter: String? {
            switch self {
            case .all: nil
            case .unresolved: "unresolved"
            case .resolved: "resolved"
            case .only(let state): state.rawValue
            }
        }

        var states: Set<JobState>? {
            switch self {
            case .all: nil
            case .unresolved: JobState.pendingSet
            case .resolved: JobState.resolvedSet
            case .only(let state): [state]
            }
        }
    }

    /// A bound of the creation time as typed: an instant, or a duration before the request.
    public struct TimeBound: Sendable, Hashable {
        /// The text as the URL holds it.
        public var text: String
        private var ago: Duration?
        private var instant: Date?

        /// `name` is the parameter, for the error's message.
        init(_ text: String, name: String) throws(DashboardRequestError) {
            self.text = text
            if let duration = try? Duration(parsing: text) {
                ago = duration
                return
            }
            do {
                instant = try RFC3339.date(text)
            } catch {
                throw DashboardRequestError(
                    "\(name) must be an RFC 3339 time (2026-11-24T09:00:00Z) or a duration ago (1h, 30m), "
                        + "not '\(text)': \(error.reason)")
            }
        }

        /// An instant, written as RFC 3339.
        init(instant date: Date) {
            text = RFC3339.string(date)
            instant = date
        }

        /// The instant, a duration ago counted back from `now`.
        public func date(now: Date) -> Date {
            if let instant { return instant }
            let seconds = ago.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 0
            return now.addingTimeInterval(-seconds)
        }
    }

    public var state: StateFilter
    public var definition: String?
    public var key: String?
    public var since: TimeBound?
    public var until: TimeBound?
    /// The search box's text: at least one word when set.
    public var match: String?
    public var limit: Int
    public var before: Int64?

    public static let maxLimit = 200
    /// The longest text a filter field takes (a definition, a key, a search).
    public static let maxFieldLength = 200

    public init(state: StateFilter = .all, definition: String? = nil, limit: Int = 50, before: Int64? = nil) {
        self.state = state
        self.definition = definition
        self.limit = limit
        self.before = before
    }

    /// Reads the query's `(name, value)` pairs (percent-decoded); unknown
    /// names are ignored, a bad value is an error that says what to pass.
    public init(query: [(String, String)]) throws(DashboardRequestError) {
        self.init()
        for (name, value) in query where !value.isEmpty {
            switch name {
            case "state":
                switch value {
                case "all": state = .all
                case "unresolved": state = .unresolved
                case "resolved": state = .resolved
                default:
                    guard let one = JobState(rawValue: value) else {
                        throw DashboardRequestError(
                            "state must be all, unresolved, resolved, "
                                + JobState.allCases.map(\.rawValue).joined(separator: ", ") + "; not '\(value)'")
                    }
                    state = .only(one)
                }
            case "definition":
                definition = try Self.field(name, value)
            case "key":
                key = try Self.field(name, value)
            case "since":
                since = try TimeBound(try Self.field(name, value), name: name)
            case "until":
                until = try TimeBound(try Self.field(name, value), name: name)
            case "match":
                let text = try Self.field(name, value)
                // Spaces alone, or only signs, are no search: the box was left empty.
                if text.allSatisfy(\.isWhitespace) { continue }
                guard !SearchText.words(text).isEmpty else {
                    throw DashboardRequestError("a search needs at least one word (letters or digits), not '\(text)'")
                }
                match = text
            case "limit":
                guard let number = Int(value), (1...Self.maxLimit).contains(number) else {
                    throw DashboardRequestError("limit must be a number within 1…\(Self.maxLimit), not '\(value)'")
                }
                limit = number
            case "before":
                guard let id = Int64(value), id > 0 else {
                    throw DashboardRequestError("before must be a job id (a positive number), not '\(value)'")
                }
                before = id
            default:
                continue
            }
        }
    }

    private static func field(_ name: String, _ value: String) throws(DashboardRequestError) -> String {
        guard value.count <= maxFieldLength else {
            throw DashboardRequestError("\(name) takes at most \(maxFieldLength) characters, not \(value.count)")
        }
        return value
    }

    /// The store's query, times counted from `now`.
    public func jobQuery(now: Date) -> JobQuery {
        JobQuery(
            states: state.states, definition: definition, key: key, createdSince: since?.date(now: now),
            createdUntil: until?.date(now: now), limit: limit, before: before, values: false)
    }

    /// The query parameters of the filter (not the page), in the order links write them.
    var filterParameters: [(String, String?)] {
        [
            ("state", state.parameter), ("definition", definition), ("key", key), ("since", since?.text),
            ("until", until?.text), ("match", match),
        ]
    }

    /// This list's link, with another cursor.
    func link(before cursor: Int64?) -> String {
        Layout.query(
            filterParameters + [("limit", limit == 50 ? nil : String(limit)), ("before", cursor.map(String.init))])
    }

    /// The filter with its durations ago made instants: what a bulk action's
    /// form carries, so that it acts on the selection its confirmation counted.
    func pinned(now: Date) -> JobListRequest {
        var pinned = self
        pinned.since = since.map { TimeBound(instant: $0.date(now: now)) }
        pinned.until = until.map { TimeBound(instant: $0.date(now: now)) }
        return pinned
    }
}

/// A request the dashboard cannot answer as asked (HTTP 400), with what to
/// ask instead.
public struct DashboardRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
