internal import Yams
import JobValues

extension HTTPAccessConfig {
    /// The keys of `http:` besides `listen`.
    static let keys = ["users", "users-credential", "public", "trusted-proxies", "session", "operator-group"]
}

extension ConfigParser {
    /// One access key of `http:`.
    func parseHTTPAccess(_ entry: NodeReader.Entry, into access: inout HTTPAccessConfig, reader: inout NodeReader) {
        switch entry.key {
        case "users":
            guard let path = reader.nonEmptyString(entry.value, "'users' of 'http'") else { return }
            access.users = .file(ConfigPaths.resolve(path, against: folder))
        case "users-credential":
            guard let name = reader.nonEmptyString(entry.value, "'users-credential' of 'http'") else { return }
            guard !name.contains("/") else {
                reader.error(.invalidValue, at: entry.value,
                             "'users-credential' of 'http' is a credential's name (LoadCredential=NAME:PATH), not a path")
                return
            }
            access.users = .credential(name)
        case "public":
            guard let text = reader.string(entry.value, "'public' of 'http'") else { return }
            switch text {
            case "read": access.publicRead = true
            case "none": access.publicRead = false
            default:
                reader.error(.invalidValue, at: entry.value,
                             "'public' of 'http' is read (every page readable without a login) or none, found '\(text)'")
            }
        case "trusted-proxies":
            guard let addresses = reader.stringList(entry.value, "'trusted-proxies' of 'http'") else { return }
            for address in addresses where !IPLiteral.isIPv4(address) && !IPLiteral.isIPv6(address) {
                reader.error(.invalidValue, at: entry.value,
                             "'trusted-proxies' of 'http' lists IP addresses; '\(address)' is not one")
                return
            }
            access.trustedProxies = addresses
        case "session":
            guard let lifetime = reader.duration(entry.value, "'session' of 'http'") else { return }
            access.sessionLifetime = lifetime
        case "operator-group":
            guard let group = reader.nonEmptyString(entry.value, "'operator-group' of 'http'") else { return }
            access.operatorGroup = group
        default:
            break
        }
    }

    /// A listener other hosts can reach serves nobody it cannot tell apart
    /// unless that is asked for: it needs users, a trusted proxy, or `public: read`.
    func checkHTTPAccess(_ access: HTTPAccessConfig, listen: HTTPListenAddress, at node: Node, reader: inout NodeReader) {
        guard !listen.isLocal, !access.authenticates, !access.publicRead else { return }
        reader.error(
            .invalidValue, at: node,
            "'http' listens on \(listen), which other hosts can reach, without authentication: give 'users' "
                + "(or 'users-credential', or 'trusted-proxies'), or 'public: read' to let anyone read the dashboard")
    }
}
