import Foundation
import Locking
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where jobd's log lines go (stderr) and how they look.
///
/// - Under journald — `JOURNAL_STREAM` names the device and inode of
///   stderr — a line is `<N>message key=value…`: journald reads the syslog
///   priority N from the prefix and adds the time itself.
/// - Elsewhere: `2026-11-21T08:40:03.123Z warning message key=value…`.
///
/// One event is one line: newlines inside a message are written `\n`.
public final class LogOutput: Sendable {
    public enum Format: Sendable, Hashable {
        case journal
        case plain
    }

    public let format: Format
    private let level: Mutex<Logger.Level>
    private let fd: Int32

    public init(format: Format, level: Logger.Level, fd: Int32 = STDERR_FILENO) {
        self.format = format
        self.level = Mutex(level)
        self.fd = fd
    }

    /// The format for stderr as this process finds it.
    public static func detectFormat(
        environment: [String: String] = ProcessInfo.processInfo.environment, fd: Int32 = STDERR_FILENO
    ) -> Format {
        guard let stream = environment["JOURNAL_STREAM"] else { return .plain }
        let parts = stream.split(separator: ":")
        var status = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), fstat(fd, &status) == 0
        else {
            return .plain
        }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode ? .journal : .plain
    }

    /// The level below which events are dropped; a reload changes it.
    public var minimumLevel: Logger.Level {
        get { level.withAnnouncedLock { $0 } }
        set { level.withAnnouncedLock { $0 = newValue } }
    }

    /// syslog's priorities: 2 critical … 7 debug.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    public func line(level: Logger.Level, message: String, metadata: Logger.Metadata, now: Date = Date()) -> String {
        var text: String
        switch format {
        case .journal:
            text = "<\(Self.priority(level))>"
        case .plain:
            text = Self.timestamp(now) + " " + level.rawValue + " "
        }
        text += Self.escaped(message)
        for key in metadata.keys.sorted() {
            text += " \(key)=" + Self.escaped(metadata[key].map { "\($0)" } ?? "")
        }
        return text + "\n"
    }

    func write(level: Logger.Level, message: String, metadata: Logger.Metadata) {
        var bytes = Array(line(level: level, message: message, metadata: metadata).utf8)
        // One write per line: lines from several threads never interleave.
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    static func escaped(_ text: String) -> String {
        guard text.contains(where: { $0 == "\n" || $0 == "\r" }) else { return text }
        return text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let fraction = Int(milliseconds % 1000)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millis)Z"
    }
}

/// swift-log's handler over a ``LogOutput``. A logger's own `logLevel`
/// overrides the output's level when set; otherwise the output's level,
/// which a reload may change, applies.
public struct JobdLogHandler: LogHandler {
    public let output: LogOutput
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private var ownLevel: Logger.Level?

    public init(output: LogOutput) {
        self.output = output
    }

    public var logLevel: Logger.Level {
        get { ownLevel ?? output.minimumLevel }
        set { ownLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        output.write(level: event.level, message: "\(event.message)", metadata: merged)
    }
}
