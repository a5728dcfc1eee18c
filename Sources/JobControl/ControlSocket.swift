import Foundation
import JobValues

#if canImport(Glibc)
import Glibc
#endif

/// The framing and socket I/O of the control protocol, for both ends: one
/// JSON document per line, at most ``ControlCoding/maximumLine`` bytes,
/// every read and write bounded by one deadline for the whole exchange (a
/// peer that sends a byte a second cannot stretch it).
public enum ControlSocket {
    /// Why a read or write did not complete.
    public enum Failure: Error, Sendable, Equatable {
        /// The deadline passed first.
        case timedOut
        /// The peer closed the connection before a whole line.
        case closed
        /// More bytes than the line may have, without a newline.
        case tooLong
        /// A system call failed: its errno.
        case system(Int32)

        public var message: String {
            switch self {
            case .timedOut: "the deadline passed"
            case .closed: "the connection closed before a whole line"
            case .tooLong: "a line too long"
            case let .system(code): String(cString: strerror(code))
            }
        }
    }

    /// Writes all of `data` before `deadline`.
    public static func sendAll(_ data: Data, to fd: Int32, deadline: ContinuousClock.Instant) throws(Failure) {
        var offset = 0
        while offset < data.count {
            try wait(fd, for: Int16(POLLOUT), until: deadline)
            let written = data.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .system(errno)
            }
            offset += written
        }
    }

    /// Reads one line (without its newline) of at most `limit` bytes before `deadline`.
    public static func readLine(
        from fd: Int32, deadline: ContinuousClock.Instant, limit: Int = ControlCoding.maximumLine
    ) throws(Failure) -> Data {
        var line = LineBuffer(limit: limit)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            try wait(fd, for: Int16(POLLIN), until: deadline)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .system(errno)
            }
            if count == 0 { throw .closed }
            switch buffer.withUnsafeBytes({ line.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) {
            case .incomplete: continue
            case let .line(data): return data
            case .tooLong: throw .tooLong
            }
        }
    }

    /// Waits until `fd` is ready for `events` (or has an error or hang-up,
    /// which the next call reports), or throws at `deadline`.
    static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) throws(Failure) {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw .timedOut }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(clamping: left.roundedUpMilliseconds))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .system(errno) }
        }
    }
}

/// Bytes of a connection gathered into one line. Bytes after the newline
/// are ignored: one request or reply per connection.
public struct LineBuffer: Sendable {
    public enum Outcome: Sendable, Equatable {
        case incomplete
        case line(Data)
        case tooLong
    }

    private var bytes = Data()
    private let limit: Int

    public init(limit: Int = ControlCoding.maximumLine) {
        self.limit = limit
    }

    /// The bytes gathered without a newline, when the peer ended the
    /// connection after them: nil if there are none.
    public var rest: Data? {
        bytes.isEmpty ? nil : bytes
    }

    public mutating func append(_ chunk: UnsafeRawBufferPointer) -> Outcome {
        if let newline = chunk.firstIndex(of: UInt8(ascii: "\n")) {
            bytes.append(contentsOf: chunk[..<newline])
            return bytes.count <= limit ? .line(bytes) : .tooLong
        }
        bytes.append(contentsOf: chunk)
        return bytes.count <= limit ? .incomplete : .tooLong
    }
}
