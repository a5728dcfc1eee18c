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
        try check(data.count, cap: cap, what: path == "-" ? "the input on stdin" : "the input file \(path)", exact: false)
        return data
    }

    /// `--input TEXT`, checked against the cap.
    static func input(text: String, cap: Int) throws(JobctlError) -> Data {
        let data = Data(text.utf8)
        try check(data.count, cap: cap, what: "the --input text")
        return data
    }

    /// One job input per line of `path` (`-` for stdin): lines end at `\n`,
    /// which is not part of the input; a last line without one counts.
    static func batch(from path: String, cap: Int) throws(JobctlError) -> [Data] {
        let data = try read(path, what: "batch file", stopAfter: nil)
        var lines: [Data] = []
        var start = data.startIndex
        var number = 1
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            let line = data[start..<end]
            try check(line.count, cap: cap, what: "line \(number) of the batch")
            lines.append(Data(line))
            start = end == data.endIndex ? end : data.index(after: end)
            number += 1
        }
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

    /// Reads `path` (`-`: stdin), up to `stopAfter` bytes if given.
    private static func read(_ path: String, what: String, stopAfter limit: Int?) throws(JobctlError) -> Data {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw JobctlError(.unreadableInput, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while limit.map({ data.count < $0 }) ?? true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw JobctlError(.unreadableInput, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }
}
