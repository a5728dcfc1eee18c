import Glibc
import Hummingbird
import NIOCore

/// Hummingbird's basic context, with the connection's channel: the
/// client's address, or on a unix socket its peer credentials.
struct ListenerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }

    /// The client: its IP address on TCP; on a unix socket (`unix`), the
    /// uid and gid of the process that connected (SO_PEERCRED, as the
    /// kernel recorded them at connect).
    func peer(unix: Bool) async -> DashboardAccess.Peer {
        guard unix else { return DashboardAccess.Peer(address: channel.remoteAddress?.ipAddress, credentials: nil) }
        guard let provider = channel as? any SocketOptionProvider else { return DashboardAccess.Peer() }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        guard let credentials = try? await future.get() else { return DashboardAccess.Peer() }
        return DashboardAccess.Peer(address: nil, credentials: (credentials.uid, credentials.gid))
    }
}

/// Linux's `struct ucred`, which Glibc's module does not export (it needs
/// `_GNU_SOURCE`): the same three 32-bit fields, in order.
struct PeerCredentials: Sendable {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
