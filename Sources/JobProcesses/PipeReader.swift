#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a non-blocking pipe until it would block.
enum PipeReader {
    enum Result {
        case wouldBlock
        case endOfFile
        /// The sink returned false (stdout over its limit).
        case sinkRefused
        case failed(Int32)
    }

    static let chunkSize = 64 << 10

    /// Reads chunks into `sink` until the pipe is empty, at EOF, or
    /// `budget` bytes went by (then `.wouldBlock`: the level-triggered
    /// source fires again, and other processes get their turn).
    static func drain(
        _ fd: Int32, budget: Int = 1 << 20, _ sink: (UnsafeRawBufferPointer) -> Bool
    ) -> Result {
        withUnsafeTemporaryAllocation(byteCount: chunkSize, alignment: 16) { buffer in
            var total = 0
            while total < budget {
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count > 0 {
                    total += count
                    guard sink(UnsafeRawBufferPointer(rebasing: buffer[..<count])) else { return .sinkRefused }
                    continue
                }
                if count == 0 { return .endOfFile }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .wouldBlock
                case let error: return .failed(error)
                }
            }
            return .wouldBlock
        }
    }
}
