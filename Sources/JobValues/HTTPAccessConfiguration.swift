/// Who may use the dashboard, and how they prove it: `http:` keys beside `listen`.
///
/// ```yaml
/// http:
///   listen: 0.0.0.0:9464
///   users: /etc/jobd/http-users     # NAME:ROLE:HASH lines (jobd --hash-password makes HASH)
///   # users-credential: http-users  # the same, from $CREDENTIALS_DIRECTORY (systemd LoadCredential=)
///   public: read                    # reading without a login
///   trusted-proxies: [127.0.0.1]    # Remote-User is believed from these addresses only
///   session: 12h                    # how long a login lasts
///   operator-group: jobd            # on a unix listener: this group (and root) operate
/// ```
public struct HTTPAccessConfiguration: Sendable, Hashable {
    /// Where the users and their password hashes are read from.
    public enum UserSource: Sendable, Hashable {
        /// A file, by path.
        case file(String)
        /// A systemd credential, by name: `$CREDENTIALS_DIRECTORY/NAME`.
        case credential(String)
    }

    public var users: UserSource?
    /// Every page may be read without a login (`public: read`).
    public var publicRead: Bool
    /// Addresses whose `Remote-User` header names the user (a reverse proxy that authenticated them).
    public var trustedProxies: [String]
    public var sessionLifetime: Duration
    /// On a unix-socket listener, the group whose members (and root) operate; other peers read.
    public var operatorGroup: String

    public static let defaultSessionLifetime = Duration.seconds(12 * 3600)

    public init(
        users: UserSource? = nil, publicRead: Bool = false, trustedProxies: [String] = [],
        sessionLifetime: Duration = HTTPAccessConfiguration.defaultSessionLifetime, operatorGroup: String = "jobd"
    ) {
        self.users = users
        self.publicRead = publicRead
        self.trustedProxies = trustedProxies
        self.sessionLifetime = sessionLifetime
        self.operatorGroup = operatorGroup
    }

    /// Whether `text` is an IPv4 or IPv6 address literal (`trusted-proxies` lists them).
    public static func isIPAddress(_ text: String) -> Bool {
        IPLiteral.isIPv4(text) || IPLiteral.isIPv6(text)
    }

    /// Some way of telling who a client is besides its address.
    public var authenticates: Bool { users != nil || !trustedProxies.isEmpty }
}

extension HTTPListenAddress {
    /// A TCP address other hosts cannot reach: 127.0.0.0/8, ::1, localhost. A unix socket counts as local.
    public var isLocal: Bool {
        switch self {
        case .unix: return true
        case .tcp(let host, _):
            return host == "::1" || host == "localhost" || (IPLiteral.isIPv4(host) && host.hasPrefix("127."))
        }
    }
}
