import Logging
import Synchronization

/// A swift-log handler for tests: each record as one line,
/// `[level] job N stage P: message`, given to `write` (a file, a list).
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]
    private let write: @Sendable (String) -> Void

    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        var prefix = "[\(event.level.rawValue)]"
        if let job = all["job"] { prefix += " job \(job)" }
        if let stage = all["stage"] { prefix += " stage \(stage)" }
        write("\(prefix): \(event.message)")
    }
}

/// Log lines kept in memory, for a test to read.
public final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var all: [String] { lines.withLock { $0 } }

    public var logger: Logger {
        Logger(label: "test") { _ in LineLogHandler { line in self.lines.withLock { $0.append(line) } } }
    }
}
