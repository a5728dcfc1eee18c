import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads jobd.yaml and definition files: regular files only, of a bounded
/// size, as UTF-8 — every way that fails is one clear diagnostic.
///
/// A FIFO or a device (`/dev/zero`, `/dev/null`) given as a config file
/// would hang or never end: it is refused before a byte is read (the file is
/// opened non-blocking, then checked with `fstat`).
enum ConfigFile {
    /// The largest config or definition file read: far past any real one.
    static let maxBytes = 1 << 20

    /// What kind of thing is at `path` (symlinks followed).
    enum Kind: Equatable {
        case regularFile
        case folder
        /// A FIFO, socket or device: its name, for messages.
        case special(String)
        case missing
        /// `stat` failed for another reason: its `strerror`.
        case unreachable(String)
    }

    static func kind(of path: String) -> Kind {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .missing : .unreachable(String(cString: strerror(errno)))
        }
        return kind(of: status)
    }

    private static func kind(of status: stat) -> Kind {
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFDIR: return .folder
        case S_IFIFO: return .special("a FIFO")
        case S_IFSOCK: return .special("a socket")
        case S_IFCHR: return .special("a character device")
        case S_IFBLK: return .special("a block device")
        default: return .special("not a regular file")
        }
    }

    /// Why `path`, expected to be a regular file, cannot be used; nil if it can.
    static func problem(with kind: Kind) -> String? {
        switch kind {
        case .regularFile: return nil
        case .folder: return "is a folder, not a file"
        case let .special(what): return "is \(what), not a regular file"
        case .missing: return "does not exist"
        case let .unreachable(reason): return "cannot be reached: \(reason)"
        }
    }

    /// The text of the file at `path`, or the diagnostics that say why not.
    static func read(path: String) -> (text: String?, diagnostics: [Diagnostic]) {
        func fail(_ message: String) -> (String?, [Diagnostic]) {
            (nil, [Diagnostic(code: .unreadableFile, at: .file(path), "the file \(message)")])
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == EACCES { return fail("cannot be read: permission denied (check its permissions)") }
            if code == ENOENT, case .missing = kind(of: path) {
                var link = stat()
                return lstat(path, &link) == 0 ? fail("is a broken symlink") : fail("does not exist")
            }
            return fail("cannot be opened: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return fail("cannot be read: \(String(cString: strerror(errno)))") }
        if let problem = problem(with: kind(of: status)) { return fail(problem) }
        guard status.st_size <= maxBytes else {
            return fail("is \(status.st_size) bytes, larger than any config file jobd reads (\(maxBytes) bytes)")
        }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                return fail("cannot be read: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maxBytes else {
            return fail("grew past \(maxBytes) bytes while it was read")
        }
        bytes.removeSubrange(count...)
        if let offset = firstInvalidUTF8(bytes) {
            let (line, column) = position(ofByte: offset, in: bytes)
            return (
                nil,
                [
                    Diagnostic(
                        code: .unreadableFile, at: SourcePosition(path: path, line: line, column: column),
                        "the file is not UTF-8 text: byte \(offset) (0x\(String(bytes[offset], radix: 16, uppercase: true))) "
                            + "is not valid UTF-8; save the file as UTF-8")
                ]
            )
        }
        return (String(decoding: bytes, as: UTF8.self), [])
    }

    /// The offset of the first byte that does not belong to valid UTF-8.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar):
                offset += UTF8.width(scalar)
            case .emptyInput:
                return nil
            case .error:
                // The bad sequence starts where the last good scalar ended.
                return offset
            }
        }
    }

    /// 1-based line and column (in Unicode scalars, as libyaml counts) of byte `offset`.
    static func position(ofByte offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let before = bytes[..<offset]
        let line = before.lazy.filter { $0 == UInt8(ascii: "\n") }.count + 1
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        // Continuation bytes (10xxxxxx) do not start a scalar.
        let column = bytes[lineStart..<offset].lazy.filter { $0 & 0xC0 != 0x80 }.count + 1
        return (line, column)
    }
}
