import Dispatch
import Foundation
import JobValues
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why the control socket could not be set up.
public struct ControlServerError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// jobd's end of the control socket (see `ControlRequest`): a unix stream
/// socket, mode 0660, in the group of the database file — whoever may
/// write the database may nudge jobd.
///
/// One thread polls the listening socket and every connection still
/// sending its request: no thread waits on an idle client. Each request
/// must arrive whole within ``requestDeadline`` of its connection, ended by
/// a newline or by the client shutting its end down, and at most
/// ``maxConnections`` connections are served at once; a connection past
/// that, a request over ``ControlCoding/maximumLine`` bytes, a request that
/// is not complete in time, or one that is not a request, gets an error
/// reply (never a bare reset) and is closed. A reply is bounded by its
/// command (``ControlRequest/Command/replyLimit`` and `deadline`).
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) -> Void

    /// How long a client has to send its whole request, from `accept`.
    public static let requestDeadline: Duration = .seconds(2)
    /// How long a refusal may take to write (a reply to a command: its
    /// ``ControlRequest/Command/deadline``).
    public static let replyDeadline: Duration = .seconds(2)
    /// Connections read or answered at once.
    public static let maxConnections = 64

    public let path: String
    private let fd: Int32
    private let inode: UInt64
    private let handler: Handler
    private let replies = DispatchQueue(label: "jobd.control.replies", attributes: .concurrent)
    private let stopped = Atomic<Bool>(false)
    /// Connections accepted and not yet closed (reading, handled, or replying).
    private let open = Atomic<Int>(0)

    /// Binds and listens on `path`. A leftover socket nobody listens on is
    /// replaced; one where another jobd answers is an error, as is any
    /// other kind of file at `path`.
    public init(path: String, groupOf groupFile: String?, handler: @escaping Handler) throws(ControlServerError) {
        self.path = path
        self.handler = handler
        try Self.clearStaleSocket(at: path)
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw ControlServerError(
                    description: "cannot create the socket's folder \(folder): \(error.localizedDescription)")
            }
        }
        guard !path.hasPrefix("@"), let address = UnixSocketAddress(path: path) else {
            throw ControlServerError(
                description:
                    "the socket path \(path) is \(path.utf8.count) bytes; a unix socket path must be 1 to \(UnixSocketAddress.maximumPathBytes); set a shorter `socket:` in jobd.yaml"
            )
        }
        // Non-blocking: the poll loop accepts until `accept` says EAGAIN.
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ControlServerError(description: "socket(): \(Self.lastError())") }
        // Owner and group only (the chmod below) before it listens: until
        // then no one can connect, so the mode bind gives it from the umask
        // does not matter. The umask itself is left alone: it is the whole
        // process's, and changing it here would change the mode of files
        // other threads create meanwhile.
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        guard bound == 0 else {
            let reason = Self.lastError()
            close(fd)
            throw ControlServerError(description: "cannot bind the control socket \(path): \(reason)")
        }
        guard chmod(path, 0o660) == 0 else {
            let reason = Self.lastError()
            close(fd)
            unlink(path)
            throw ControlServerError(description: "cannot set the mode of the control socket \(path): \(reason)")
        }
        if let groupFile {
            var status = stat()
            if stat(groupFile, &status) == 0, status.st_gid != getegid() {
                // Best effort: only root or a member of that group may do this.
                _ = chown(path, uid_t.max, status.st_gid)
            }
        }
        guard listen(fd, 64) == 0 else {
            let reason = Self.lastError()
            close(fd)
            unlink(path)
            throw ControlServerError(description: "cannot listen on \(path): \(reason)")
        }
        var status = stat()
        stat(path, &status)
        self.inode = UInt64(status.st_ino)
        self.fd = fd
    }

    /// Starts serving, on a thread of its own.
    public func start() {
        let thread = Thread { [self] in pollLoop() }
        thread.name = "jobd-control"
        thread.start()
    }

    /// Stops accepting and removes the socket file (if it is still ours).
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        var status = stat()
        if stat(path, &status) == 0, UInt64(status.st_ino) == inode { unlink(path) }
    }

    /// A connection still sending its request.
    private struct Pending {
        let fd: Int32
        let deadline: ContinuousClock.Instant
        var line = LineBuffer()
    }

    private func pollLoop() {
        var pending: [Pending] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .acquiring) {
            var entries =
                [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
                + pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let now = ContinuousClock.now
            let wait = pending.map { now.duration(to: $0.deadline) }.min().map { max($0, .zero) }
            let ready = poll(
                &entries, nfds_t(entries.count), wait.map { Int32(clamping: $0.roundedUpMilliseconds) } ?? -1)
            if ready < 0 {
                if errno == EINTR { continue }
                usleep(50_000)
                continue
            }
            var still: [Pending] = []
            for (index, connection) in pending.enumerated() {
                var connection = connection
                if entries[index + 1].revents != 0 {
                    let count = buffer.withUnsafeMutableBytes {
                        recv(connection.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    if count < 0, errno == EINTR || errno == EAGAIN {
                        still.append(connection)
                        continue
                    }
                    guard count > 0 else {
                        if count == 0, let request = connection.line.rest {
                            // The client shut down its end after a request
                            // without a newline: that ends the request.
                            handle(request, on: connection.fd)
                        } else {
                            // Closed (or failed) before sending anything: nobody to answer.
                            finish(connection.fd)
                        }
                        continue
                    }
                    switch buffer.withUnsafeBytes({
                        connection.line.append(UnsafeRawBufferPointer(rebasing: $0[0..<count]))
                    }) {
                    case .incomplete:
                        break
                    case let .line(data):
                        handle(data, on: connection.fd)
                        continue
                    case .tooLong:
                        refuse(connection.fd, "the request is over \(ControlCoding.maximumLine) bytes")
                        continue
                    }
                }
                if ContinuousClock.now >= connection.deadline {
                    refuse(connection.fd, "the request did not arrive whole within \(Self.requestDeadline)")
                } else {
                    still.append(connection)
                }
            }
            pending = still
            if entries[0].revents != 0 { pending += acceptAll() }
        }
        for connection in pending { finish(connection.fd) }
        close(fd)
    }

    /// Accepts every waiting connection; those past the limit are refused at once.
    private func acceptAll() -> [Pending] {
        var accepted: [Pending] = []
        while true {
            let client = accept(fd, nil, nil)
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            }
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                // EAGAIN: none left. EMFILE and friends: the next poll tries again.
                if errno != EAGAIN && errno != EWOULDBLOCK { usleep(10_000) }
                return accepted
            }
            if open.add(1, ordering: .relaxed).newValue > Self.maxConnections {
                refuse(client, "jobd is serving \(Self.maxConnections) control connections; try again")
            } else {
                accepted.append(Pending(fd: client, deadline: ContinuousClock.now + Self.requestDeadline))
            }
        }
    }

    private func handle(_ line: Data, on client: Int32) {
        let request: ControlRequest
        do {
            request = try ControlCoding.decodeLine(ControlRequest.self, from: line)
        } catch {
            refuse(
                client, "not a control request (expected one JSON object such as {\"command\":\"status\"} on one line)")
            return
        }
        handler(request) { [self] reply in
            replies.async { self.reply(reply, to: client, command: request.command) }
        }
    }

    private func refuse(_ client: Int32, _ reason: String) {
        replies.async { self.reply(ControlReply(ok: false, error: reason), to: client, command: nil) }
    }

    /// Writes `reply` within the command's deadline; one over the command's
    /// limit is replaced by an error that names the limit.
    private func reply(_ reply: ControlReply, to client: Int32, command: ControlRequest.Command?) {
        let limit = command?.replyLimit ?? ControlCoding.maximumReply
        if var data = try? ControlCoding.encodeLine(reply) {
            if data.count - 1 > limit {
                let what = command.map { "the \($0) reply" } ?? "the reply"
                let refusal = ControlReply(
                    ok: false,
                    error:
                        "\(what) is \(data.count - 1) bytes, over the control socket's limit of \(ControlCoding.text(bytes: limit)) for it"
                        + (command == .metrics ? "; read /metrics over HTTP (http: in jobd.yaml) instead" : ""))
                data = (try? ControlCoding.encodeLine(refusal)) ?? Data()
            }
            try? ControlSocket.sendAll(data, to: client, deadline: .now + (command?.deadline ?? Self.replyDeadline))
        }
        finish(client)
    }

    private func finish(_ client: Int32) {
        close(client)
        open.subtract(1, ordering: .relaxed)
    }

    private static func clearStaleSocket(at path: String) throws(ControlServerError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw ControlServerError(
                description: "\(path) exists and is not a socket; move it away or set another `socket:` in jobd.yaml")
        }
        do {
            let reply = try ControlClient.send(ControlRequest(.status), to: path, timeout: .seconds(1))
            let pid = reply.status.map { " (pid \($0.pid))" } ?? ""
            throw ControlServerError(
                description:
                    "another jobd\(pid) already listens on \(path); stop it first, or give this one another `socket:` in jobd.yaml"
            )
        } catch let error as ControlServerError {
            throw error
        } catch {
            // Nobody answers: a leftover of a jobd that did not stop cleanly.
            unlink(path)
        }
    }

    static func lastError() -> String { String(cString: strerror(errno)) }
}
