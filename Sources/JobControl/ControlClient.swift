import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why jobctl could not talk to jobd.
public struct ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No socket, or nobody listening on it: jobd is not running.
        public static let notRunning = Code("not-running")
        /// The socket exists but this user may not connect to it.
        public static let permissionDenied = Code("permission-denied")
        /// jobd did not answer in time.
        public static let timedOut = Code("timed-out")
        /// Anything else: a bad path, a garbled answer, an error reply.
        public static let failed = Code("failed")
    }

    public var code: Code
    public var socketPath: String
    public var message: String

    public init(_ code: Code, socketPath: String, _ message: String) {
        self.code = code
        self.socketPath = socketPath
        self.message = message
    }

    public var description: String { message }
}

/// The jobctl end of the control socket: connect, send one request, read
/// one reply. Blocking, with a deadline; for a command-line tool.
public enum ControlClient {
    /// Sends `request` and reads jobd's reply, all within `timeout` (by
    /// default the command's ``ControlRequest/Command/deadline``).
    public static func send(
        _ request: ControlRequest, to socketPath: String, timeout: Duration? = nil
    ) throws(ControlError) -> ControlReply {
        let timeout = timeout ?? request.command.deadline
        let deadline = ContinuousClock.now + timeout
        let fd = try connect(to: socketPath, timeout: timeout)
        defer { close(fd) }
        let line: Data
        do {
            line = try ControlCoding.encodeLine(request)
        } catch {
            throw ControlError(.failed, socketPath: socketPath, "could not encode the request: \(error)")
        }
        let answer: Data
        let limit = request.command.replyLimit
        do {
            try ControlSocket.sendAll(line, to: fd, deadline: deadline)
        } catch {
            // jobd may have refused the connection before reading the
            // request (it serves too many), and closed it: its reply says
            // why, where a bare "Broken pipe" would not.
            if let reply = try? ControlSocket.readLine(from: fd, deadline: deadline, limit: limit),
                let refusal = try? ControlCoding.decodeLine(ControlReply.self, from: reply), !refusal.ok
            {
                throw ControlError(
                    .failed, socketPath: socketPath,
                    "jobd at \(socketPath) refused the request: \(refusal.error ?? "no reason given")")
            }
            throw Self.error(error, socketPath: socketPath, command: request.command, timeout: timeout)
        }
        do {
            answer = try ControlSocket.readLine(from: fd, deadline: deadline, limit: limit)
        } catch {
            throw Self.error(error, socketPath: socketPath, command: request.command, timeout: timeout)
        }
        let reply: ControlReply
        do {
            reply = try ControlCoding.decodeLine(ControlReply.self, from: answer)
        } catch {
            throw ControlError(
                .failed, socketPath: socketPath,
                "jobd at \(socketPath) sent an answer that is not a control reply: \(error)")
        }
        guard reply.ok else {
            throw ControlError(
                .failed, socketPath: socketPath,
                "jobd at \(socketPath) refused the request: \(reply.error ?? "no reason given")")
        }
        return reply
    }

    /// `status`, or nil when jobd is not running.
    public static func status(socketPath: String, timeout: Duration? = nil) throws(ControlError) -> DaemonStatus? {
        do {
            return try send(ControlRequest(.status), to: socketPath, timeout: timeout).status
        } catch  where error.code == .notRunning {
            return nil
        }
    }

    // MARK: Socket calls

    private static func connect(to path: String, timeout: Duration) throws(ControlError) -> Int32 {
        guard let address = UnixSocketAddress(path: path) else {
            throw ControlError(
                .failed, socketPath: path,
                "the socket path \(path) is \(path.utf8.count) bytes; a unix socket path must be 1 to \(UnixSocketAddress.maximumPathBytes)"
            )
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ControlError(.failed, socketPath: path, "socket(): \(String(cString: strerror(errno)))")
        }
        var limit = timeval(timeout)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let result = address.withSocketAddress { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ECONNREFUSED, ENOTDIR:
                throw ControlError(.notRunning, socketPath: path, "jobd is not running (nothing listens on \(path))")
            case EACCES, EPERM:
                throw ControlError(
                    .permissionDenied, socketPath: path,
                    "may not connect to jobd's socket \(path): permission denied (join the socket's group, usually `jobd`)"
                )
            case EAGAIN, ETIMEDOUT:
                throw ControlError(.timedOut, socketPath: path, "jobd at \(path) did not accept the connection in time")
            default:
                throw ControlError(
                    .failed, socketPath: path, "could not connect to \(path): \(String(cString: strerror(code)))")
            }
        }
        return fd
    }

    private static func error(
        _ failure: ControlSocket.Failure, socketPath: String, command: ControlRequest.Command, timeout: Duration
    ) -> ControlError {
        switch failure {
        case .timedOut:
            ControlError(
                .timedOut, socketPath: socketPath,
                "jobd at \(socketPath) did not answer within \(Self.text(timeout)) (jobctl's deadline for a \(command) request)"
            )
        case .closed:
            ControlError(
                .failed, socketPath: socketPath, "jobd at \(socketPath) closed the connection without answering")
        case .tooLong:
            ControlError(
                .failed, socketPath: socketPath,
                "jobd at \(socketPath) sent a reply over \(ControlCoding.text(bytes: command.replyLimit)) (jobctl's limit for a \(command) reply)"
            )
        case .system:
            ControlError(.failed, socketPath: socketPath, "could not talk to jobd at \(socketPath): \(failure.message)")
        }
    }
}

extension ControlClient {
    /// `2 s`, `0.5 s`: a deadline as an error names it.
    static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard attoseconds != 0 else { return "\(seconds) s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }
}

extension timeval {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
