import Dispatch
import Foundation
import JobEngine
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
/// write the database may nudge jobd. One thread accepts; each connection
/// is read and answered on a queue, with a deadline, so a client that
/// stalls holds nothing up.
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) -> Void

    public let path: String
    private let fd: Int32
    private let inode: UInt64
    private let handler: Handler
    private let connections = DispatchQueue(label: "jobd.control.connections", attributes: .concurrent)
    private let stopped = Atomic<Bool>(false)

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
                throw ControlServerError(description: "cannot create the socket's folder \(folder): \(error.localizedDescription)")
            }
        }
        guard !path.hasPrefix("@"), let address = UnixSocketAddress(path: path) else {
            throw ControlServerError(description: "the socket path \(path) is \(path.utf8.count) bytes; a unix socket path must be 1 to \(UnixSocketAddress.maximumPathBytes); set a shorter `socket:` in jobd.yaml")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlServerError(description: "socket(): \(Self.lastError())") }
        // Owner and group only, from the moment it exists.
        let oldMask = umask(0o117)
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        umask(oldMask)
        guard bound == 0 else {
            let reason = Self.lastError()
            close(fd)
            throw ControlServerError(description: "cannot bind the control socket \(path): \(reason)")
        }
        chmod(path, 0o660)
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

    /// Starts accepting connections.
    public func start() {
        let thread = Thread { [self] in acceptLoop() }
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

    private func acceptLoop() {
        while !stopped.load(ordering: .acquiring) {
            // (Children cannot inherit it anyway: the spawner closes every
            // descriptor above 2; close-on-exec is for anything else.)
            let client = accept(fd, nil, nil)
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if stopped.load(ordering: .acquiring) { break }
                // EMFILE and friends: back off instead of spinning.
                usleep(50_000)
                continue
            }
            connections.async { self.serve(client) }
        }
        close(fd)
    }

    private func serve(_ client: Int32) {
        var limit = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard let line = readLine(client) else {
            close(client)
            return
        }
        let reply: @Sendable (ControlReply) -> Void = { answer in
            if let data = try? ControlCoding.encodeLine(answer) {
                data.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let sent = send(client, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                        if sent <= 0 { break }
                        offset += sent
                    }
                }
            }
            close(client)
        }
        do {
            handler(try ControlCoding.decodeLine(ControlRequest.self, from: line), reply)
        } catch {
            reply(ControlReply(ok: false, error: "not a control request (expected one JSON object such as {\"command\":\"status\"} on one line)"))
        }
    }

    private func readLine(_ client: Int32) -> Data? {
        var line = Data()
        var buffer = [UInt8](repeating: 0, count: 1024)
        while line.count <= ControlCoding.maximumLine {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return line.isEmpty ? nil : line }
            if let newline = buffer[0..<count].firstIndex(of: UInt8(ascii: "\n")) {
                line.append(contentsOf: buffer[0..<newline])
                return line
            }
            line.append(contentsOf: buffer[0..<count])
        }
        return nil
    }

    private static func clearStaleSocket(at path: String) throws(ControlServerError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw ControlServerError(description: "\(path) exists and is not a socket; move it away or set another `socket:` in jobd.yaml")
        }
        do {
            let reply = try ControlClient.send(ControlRequest(.status), to: path, timeout: .seconds(1))
            let pid = reply.status.map { " (pid \($0.pid))" } ?? ""
            throw ControlServerError(description: "another jobd\(pid) already listens on \(path); stop it first, or give this one another `socket:` in jobd.yaml")
        } catch let error as ControlServerError {
            throw error
        } catch {
            // Nobody answers: a leftover of a jobd that did not stop cleanly.
            unlink(path)
        }
    }

    static func lastError() -> String { String(cString: strerror(errno)) }
}
