public import JobStore

/// The jobs list's query string, as `jobctl list` takes its options:
/// `state` (`unresolved` = pending + running, `resolved`, or one state),
/// `definition`, `limit` (1…200, default 50) and `before` (the cursor of the
/// previous page: only older jobs).
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

    public var state: StateFilter
    public var definition: String?
    public var limit: Int
    public var before: Int64?

    public static let maxLimit = 200

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
                definition = value
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

    public var jobQuery: JobQuery {
        JobQuery(states: state.states, definition: definition, limit: limit, before: before, values: false)
    }

    /// This list's link, with another cursor.
    func link(before cursor: Int64?) -> String {
        Layout.query([
            ("state", state.parameter), ("definition", definition),
            ("limit", limit == 50 ? nil : String(limit)), ("before", cursor.map(String.init)),
        ])
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
