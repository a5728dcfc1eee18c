import Foundation

/// One line a process wrote to stderr, without its newline; its bytes are
/// kept as written (any encoding, NUL and terminal escapes included).
public struct OutputLine: Sendable, Hashable {
    /// When jobd read it (lines read together share a time).
    public var at: Date
    public var bytes: [UInt8]

    public init(at: Date, bytes: [UInt8]) {
        self.at = at
        self.bytes = bytes
    }
}

/// Takes a process's stderr line by line as it is read. Called on the
/// runner's event-loop thread under the process's lock: it must be quick and
/// never block (every other process waits meanwhile). Lines of one process
/// arrive in order; a sink shared by several processes gets each one's lines
/// in order, interleaved as they were read.
public protocol OutputLineSink: Sendable {
    func receive(_ lines: [OutputLine])
}

/// Cuts a byte stream into lines. A line longer than `maxLineBytes` is
/// handed on in pieces of that size, so memory stays bounded whatever the
/// program writes; what follows the last newline is a line of its own at
/// the end.
struct LineSplitter {
    /// The longest piece of a line kept together.
    static let maxLineBytes = 16 << 10

    private var partial: [UInt8] = []

    mutating func split(_ chunk: UnsafeRawBufferPointer, at time: Date, into lines: inout [OutputLine]) {
        var start = 0
        let bytes = chunk.bindMemory(to: UInt8.self)
        while start < bytes.count {
            let room = Self.maxLineBytes - partial.count
            let end = min(bytes.count, start + room)
            if let newline = bytes[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                if partial.isEmpty {
                    lines.append(OutputLine(at: time, bytes: Array(bytes[start..<newline])))
                } else {
                    partial.append(contentsOf: bytes[start..<newline])
                    lines.append(OutputLine(at: time, bytes: partial))
                    partial = []
                }
                start = newline + 1
            } else {
                partial.append(contentsOf: bytes[start..<end])
                start = end
                if partial.count >= Self.maxLineBytes {
                    lines.append(OutputLine(at: time, bytes: partial))
                    partial = []
                }
            }
        }
    }

    /// The unfinished last line, if any.
    mutating func finish(at time: Date) -> OutputLine? {
        guard !partial.isEmpty else { return nil }
        defer { partial = [] }
        return OutputLine(at: time, bytes: partial)
    }
}
