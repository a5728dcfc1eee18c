import Foundation
import Glibc
import Hummingbird
import HummingbirdCore
public import JobDashboard
public import JobValues
public import Logging
public import NIOCore
public import ServiceLifecycle
import Synchronization

/// The HTTP listener as a swift-service-lifecycle `Service`: run it in the
/// daemon's `ServiceGroup`; it stops on the group's graceful shutdown.
///
/// ```swift
/// let http = JobHTTPService(
///     address: try HTTPListenAddress.parse(config.http.listen, relativeTo: configFolder),
///     dashboard: Dashboard(source: StoreDashboardSource(store: store) { daemon.dashboardSnapshot() }),
///     exposition: { prometheus.exposition() },
///     logger: logger)
/// let group = ServiceGroup(services: [engine, http, …], gracefulShutdownSignals: [.sigterm], logger: logger)
/// ```
///
/// A unix socket: a stale socket file left by a jobd that died is removed
/// first (a live one is not: the service fails, saying so); the new one gets
/// mode 0660 and is removed when the service stops.
public struct JobHTTPService: Service {
    public let address: HTTPListenAddress
    let responder: JobHTTPResponder
    let logger: Logger
    let onListening: @Sendable (BoundAddress) async -> Void
    let limits: ConnectionLimits

    /// Where the listener listens once bound (a TCP port asked as 0 is known then).
    public enum BoundAddress: Sendable, Hashable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        case unix(path: String)

        /// As http.listen is written: `127.0.0.1:9464`, `[::1]:9464`, `unix:/path`.
        public var description: String {
            switch self {
            case .tcp(let host, let port): HTTPListenAddress.tcp(host: host, port: port).description
            case .unix(let path): HTTPListenAddress.unix(path: path).description
            }
        }
    }

    /// At most this many connections at once; more wait in the backlog.
    /// Above what a few clients that send slowly may hold (see
    /// ``ConnectionLimits``): each of them is closed within the header deadline.
    public static let maxConnections = 512
    /// Decoder limits: a request's headers, in all and each, and how many.
    public static let maxHeaderBytes = 16 * 1024
    public static let maxHeaderFields = 100
    /// How long requests being answered may take once the listener stops.
    public static let stopDeadline = Duration.seconds(1)
    /// An idle connection is closed after this long.
    public static let idleTimeout: TimeAmount = .seconds(60)

    /// - Parameters:
    ///   - exposition: the Prometheus text, made per `GET /metrics` (the
    ///     daemon counts the pending jobs first).
    ///   - onListening: called once the socket is bound.
    ///   - access: who may read and operate (``DashboardAccess``); by
    ///     default everyone reads and nobody logs in.
    ///   - node: the node's name, for the login pages.
    public init(
        address: HTTPListenAddress, dashboard: Dashboard, exposition: @escaping @Sendable () async -> [UInt8],
        logger: Logger, limits: ConnectionLimits = ConnectionLimits(), access: DashboardAccess? = nil,
        node: String = "",
        onListening: @escaping @Sendable (BoundAddress) async -> Void = { _ in }
    ) {
        self.limits = limits
        self.address = address
        self.responder = JobHTTPResponder(
            dashboard: dashboard, exposition: exposition, access: access ?? .open(listen: address), logger: logger,
            node: node)
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let bind: BindAddress
        switch address {
        case .tcp(let host, let port):
            bind = .hostname(host, port: port)
        case .unix(let path):
            try UnixSocketFile.removeStale(at: path)
            bind = .unixDomainSocket(path: path)
        }
        let address = self.address
        let logger = self.logger
        let onListening = self.onListening
        let listening = Mutex(false)
        var decoder = HTTP1Channel.Configuration.DecoderConfiguration()
        decoder.maxHeaderFieldSize = Self.maxHeaderBytes
        decoder.maxHeaderListSize = Self.maxHeaderBytes
        decoder.maxHeaderFieldCount = Self.maxHeaderFields
        let http1 = HTTP1Channel.Configuration(idleTimeout: Self.idleTimeout, httpDecoderConfiguration: decoder)
        let limits = self.limits
        let application = Application(
            responder: responder,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(responder: responder, configuration: http1, limits: limits)
            },
            configuration: ApplicationConfiguration(
                address: bind, serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(Self.maxConnections)),
            onServerRunning: { channel in
                listening.withLock { $0 = true }
                switch address {
                case .unix(let path):
                    if chmod(path, 0o660) != 0 {
                        logger.error("http: could not chmod 0660 \(path): \(String(cString: strerror(errno)))")
                    }
                    await onListening(.unix(path: path))
                case .tcp(let host, _):
                    await onListening(.tcp(host: host, port: channel.localAddress?.port ?? 0))
                }
            },
            logger: logger)
        defer {
            if case .unix(let path) = address { unlink(path) }
        }
        let dashboard = responder.dashboard
        do {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await application.run()
                    return true
                }
                // Once the group shuts down: no page waits for a turn any
                // more, and what is still being answered after
                // `stopDeadline` is cut off (a rendering finishes unseen).
                group.addTask {
                    do { try await gracefulShutdown() } catch { return false }
                    dashboard.stop()
                    do { try await Task.sleep(for: Self.stopDeadline) } catch { return false }
                    logger.warning(
                        "http: requests still being answered \(Self.stopDeadline) after the stop began; closing their connections"
                    )
                    return false
                }
                while let applicationEnded = try await group.next() {
                    group.cancelAll()
                    if applicationEnded { return }
                }
            }
        } catch  where !listening.withLock({ $0 }) {
            // Whatever kept it from listening, said as the config's address.
            if let error = error as? IOError { throw HTTPServiceError.cannotListen(on: address, error.errnoCode) }
            throw HTTPServiceError("http: cannot listen on \(address): \(error); check http.listen in jobd.yaml")
        }
    }
}

/// A unix socket path about to be bound.
enum UnixSocketFile {
    /// Removes a socket file nobody listens on. Throws when the path is
    /// something else than a socket, or a live listener answers on it.
    static func removeStale(at path: String) throws {
        // attributesOfItem does not follow a symbolic link (lstat).
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return }
        guard attributes[.type] as? FileAttributeType == .typeSocket else {
            throw HTTPServiceError(
                "http: \(path) exists and is not a socket; not removing it: remove or rename it, or listen elsewhere")
        }
        if isListening(path) {
            throw HTTPServiceError(
                "http: another process listens on \(path) (a jobd still running?); stop it or listen elsewhere")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw HTTPServiceError("http: cannot remove the stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    private static func isListening(_ path: String) -> Bool {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

/// The listener could not start; the message says why and what to do.
public struct HTTPServiceError: Error, Sendable, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }

    /// The socket could not be made or bound: `errno` says why.
    static func cannotListen(on address: HTTPListenAddress, _ errno: Int32) -> HTTPServiceError {
        let advice =
            switch errno {
            case EADDRINUSE: "another process listens there: stop it, or give http.listen another port"
            case EADDRNOTAVAIL:
                "no interface of this host has that address: listen on 127.0.0.1, [::1] or one of its own"
            case EAFNOSUPPORT, EACCES, EPERM:
                "under jobd.service the sandbox allows unix sockets only: install the HTTP drop-in "
                    + "(http.conf.example, docs/operations.md) or listen on unix:/run/jobd/http.sock"
            default: "check http.listen in jobd.yaml"
            }
        return HTTPServiceError("http: cannot listen on \(address): \(String(cString: strerror(errno))); \(advice)")
    }
}
