import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a job's input (`--input-file PATH|-`) or a batch (`--batch
/// PATH|-`), refusing what cannot be read or is over the store's value
/// cap before anything is written.
enum InputReader {
    /// The whole of `path` (`-` for stdin), at most `cap` bytes.
    static func input(from path: String, cap: Int) throws(JobctlError) -> Data {
        let data = try read(path, what: "input file", stopAfter: cap + 1)
        // Reading stopped past the cap: the size is known only to be larger.
        try check(
            data.count, cap: cap, what: path == "-" ? "the input on stdin" : "the input file \(path)", exact: false)
        return data
    }

    /// `--input TEXT`'s bytes, checked against the cap.
    static func input(bytes: [UInt8], cap: Int) throws(JobctlError) -> Data {
        let data = Data(bytes)
        try check(data.count, cap: cap, what: "the --input text")
        return data
    }

    /// The most jobs one `--batch` submits (one transaction).
    static let maxBatchJobs = 100_000
    /// The most bytes one `--batch` reads.
    static let maxBatchBytes = 256 << 20

    /// One job input per line of `path` (`-` for stdin): lines end at `\n`,
    /// which is not part of the input; a last line without one counts.
    /// Reading stops at the first line over `cap`, or past
    /// ``maxBatchBytes`` or ``maxBatchJobs``: `/dev/zero` is refused after
    /// `cap` bytes, not read until memory runs out.
    static func batch(from path: String, cap: Int) throws(JobctlError) -> [Data] {
        var lines: [Data] = []
        var line = Data()
        var total = 0
        func finishLine() throws(JobctlError) {
            guard lines.count < maxBatchJobs else {
                throw JobctlError(
                    .valueTooLarge,
                    "the batch has more than \(maxBatchJobs) lines, the most one batch submits; "
                        + "split it (split -l \(maxBatchJobs)); nothing was submitted")
            }
            lines.append(line)
            line = Data()
        }
        try stream(path, what: "batch file") { (chunk: ArraySlice<UInt8>) throws(JobctlError) -> Bool in
            total += chunk.count
            guard total <= maxBatchBytes else {
                throw JobctlError(
                    .valueTooLarge,
                    "the batch is more than \(maxBatchBytes) bytes, the most one batch reads; "
                        + "split it; nothing was submitted")
            }
            var rest = chunk[...]
            while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
                line.append(contentsOf: rest[..<newline])
                try check(line.count, cap: cap, what: "line \(lines.count + 1) of the batch")
                try finishLine()
                rest = rest[(newline + 1)...]
            }
            line.append(contentsOf: rest)
            // Over the cap already: say so now, without reading the rest.
            try check(line.count, cap: cap, what: "line \(lines.count + 1) of the batch", exact: false)
            return true
        }
        if !line.isEmpty { try finishLine() }
        return lines
    }

    static func check(_ count: Int, cap: Int, what: String, exact: Bool = true) throws(JobctlError) {
        guard count > cap else { return }
        let size = exact ? "\(count) bytes" : "more than \(cap) bytes"
        throw JobctlError(
            .valueTooLarge,
            "\(what) is \(size), over the value cap of \(cap) bytes (store.value-cap in jobd.yaml); "
                + "nothing was submitted")
    }

    /// Reads `path` (`-`: stdin), up to `stopAfter` bytes.
    private static func read(_ path: String, what: String, stopAfter limit: Int) throws(JobctlError) -> Data {
        var data = Data()
        try stream(path, what: what) { (chunk: ArraySlice<UInt8>) -> Bool in
            data.append(contentsOf: chunk.prefix(limit - data.count))
            return data.count < limit
        }
        return data
    }

    /// Calls `body` with each chunk read from `path` (`-`: stdin) until the
    /// end, until `body` returns false, or until it throws.
    private static func stream(
        _ path: String, what: String, _ body: (ArraySlice<UInt8>) throws(JobctlError) -> Bool
    ) throws(JobctlError) {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw JobctlError(.unreadableInput, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw JobctlError(
                    .unreadableInput, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return }
            guard try body(buffer[0..<count]) else { return }
        }
    }
}
