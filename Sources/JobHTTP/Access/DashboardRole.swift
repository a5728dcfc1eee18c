/// What a dashboard visitor may do: `read` the pages, or also `operate`
/// (retry, cancel, delete). Ordered: `operate` includes `read`.
public enum DashboardRole: String, Sendable, Hashable, Comparable, CaseIterable {
    case read
    case operate

    public static func < (lhs: DashboardRole, rhs: DashboardRole) -> Bool {
        lhs == .read && rhs == .operate
    }
}

/// Who a request comes from, as far as the listener can tell.
public struct Visitor: Sendable, Hashable {
    /// How the visitor was recognised.
    public enum Way: String, Sendable, Hashable {
        /// The unix socket's peer credentials (SO_PEERCRED).
        case peer
        /// A `Remote-User` header from a trusted proxy.
        case proxy
        /// A login session.
        case session
        /// A script's token (`Authorization: Bearer`).
        case token
        /// Nobody in particular: `public: read`, or a listener without authentication.
        case anonymous
    }

    /// The user's name; `nil` for an anonymous visitor.
    public var name: String?
    public var role: DashboardRole
    public var way: Way
    /// Where from: the client's address, or `unix socket uid N`.
    public var origin: String

    public init(name: String?, role: DashboardRole, way: Way, origin: String) {
        self.name = name
        self.role = role
        self.way = way
        self.origin = origin
    }
}
