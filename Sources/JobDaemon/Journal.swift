import Foundation
import JobControl
import JobEngine
import JobProcesses
import Locking
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// journald's native protocol without libsystemd: one datagram per entry
/// to its socket, each field `NAME=value\n`, or — for a value holding a
/// newline or bytes that are not text — `NAME\n`, the value's length as a
/// 64-bit little-endian integer, the value and `\n` (systemd's
/// JOURNAL_NATIVE_PROTOCOL). Sends never block: an entry the socket cannot
/// take now is dropped, and `send` says so.
final class Journal: Sendable {
    static let socketPath = "/run/systemd/journal/socket"

    /// The journal of a jobd that systemd started with its stderr on the
    /// journal (`JOURNAL_STREAM` set) and whose socket is there; else nil.
    static let system: Journal? = {
        guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"], !stream.isEmpty else { return nil }
        return Journal(path: socketPath)
    }()

    private let fd: Int32

    /// Connects to the datagram socket at `path`; nil if it is not there.
    init?(path: String) {
        guard let address = UnixSocketAddress(path: path) else { return nil }
        let fd = socket(
            AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return nil }
        let connected = address.withSocketAddress { connect(fd, $0, $1) }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Sends one entry; false if it was not sent (the socket is full or gone).
    @discardableResult
    func send(_ fields: [(name: String, value: [UInt8])]) -> Bool {
        let datagram = Self.datagram(fields)
        let sent = datagram.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return sent == datagram.count
    }

    static func datagram(_ fields: [(name: String, value: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.count + 10 })
        for (name, value) in fields {
            out += name.utf8
            if value.contains(UInt8(ascii: "\n")) {
                out.append(UInt8(ascii: "\n"))
                withUnsafeBytes(of: UInt64(value.count).littleEndian) { out += $0 }
            } else {
                out.append(UInt8(ascii: "="))
            }
            out += value
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }
}

/// The journal entries of one stage attempt: each stderr line an entry
/// with `JOBD_JOB_ID`, `JOBD_DEFINITION`, `JOBD_STAGE`, `JOBD_ATTEMPT` and
/// the priority of an sd-daemon `<N>` prefix (removed from the message;
/// info without one), so `journalctl JOBD_JOB_ID=42` shows a job's lines.
///
/// At most ``burst`` lines per ``interval`` of one attempt go to the
/// journal; past that, lines are counted, and one entry says how many were
/// left out (the store keeps them: `jobctl logs`) when the next interval
/// begins or the attempt ends.
final class JournalStageLog: StageLogMirror {
    static let burst = 1_000
    static let interval: Duration = .seconds(5)
    /// Default priority of a line without a `<N>` prefix: info.
    static let defaultPriority: UInt8 = 6

    private let journal: Journal
    private let common: [(name: String, value: [UInt8])]
    private let jobID: Int64
    private let burst: Int
    private let interval: Duration
    private let state = Mutex(State())

    private struct State {
        var windowStart: ContinuousClock.Instant?
        var sent = 0
        var dropped = 0
    }

    init(journal: Journal, source: StageLogSource, burst: Int = burst, interval: Duration = interval) {
        self.journal = journal
        jobID = source.jobID
        self.burst = burst
        self.interval = interval
        common = [
            ("SYSLOG_IDENTIFIER", Array("jobd".utf8)), ("JOBD_JOB_ID", Array(String(source.jobID).utf8)),
            ("JOBD_DEFINITION", Array(source.definition.utf8)), ("JOBD_STAGE", Array(source.stage.utf8)),
            ("JOBD_ATTEMPT", Array(String(source.attempt).utf8)),
        ]
    }

    func receive(_ lines: [OutputLine]) {
        for line in lines {
            let (admitted, report) = state.withAnnouncedLock { state -> (Bool, Int) in
                let now = ContinuousClock.now
                var report = 0
                if let start = state.windowStart, now - start < interval {
                    // Same interval.
                } else {
                    report = state.dropped
                    state.windowStart = now
                    state.sent = 0
                    state.dropped = 0
                }
                guard state.sent < burst else {
                    state.dropped += 1
                    return (false, report)
                }
                state.sent += 1
                return (true, report)
            }
            if report > 0 { reportDropped(report) }
            if admitted { send(line.bytes) }
        }
    }

    func close() {
        let dropped = state.withAnnouncedLock { state -> Int in
            defer { state.dropped = 0 }
            return state.dropped
        }
        if dropped > 0 { reportDropped(dropped) }
    }

    private func send(_ bytes: [UInt8]) {
        let (priority, message) = Self.split(bytes)
        journal.send(common + [("PRIORITY", [UInt8(ascii: "0") + priority]), ("MESSAGE", message)])
    }

    private func reportDropped(_ count: Int) {
        let message =
            "jobd: \(count) lines of this stage were not sent to the journal (over \(burst) per "
            + "\(interval.components.seconds) s); jobctl logs \(jobID) prints them"
        journal.send(common + [("PRIORITY", Array("4".utf8)), ("MESSAGE", Array(message.utf8))])
    }

    /// The priority of an sd-daemon `<N>` prefix (0…7) and the line without it.
    static func split(_ bytes: [UInt8]) -> (priority: UInt8, message: [UInt8]) {
        if bytes.count >= 3, bytes[0] == UInt8(ascii: "<"), bytes[2] == UInt8(ascii: ">"),
            (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[1])
        {
            return (bytes[1] - UInt8(ascii: "0"), Array(bytes[3...]))
        }
        return (defaultPriority, bytes)
    }
}
