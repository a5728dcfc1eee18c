#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PMKConfiguration {
    /// The default `logHandler`: one line on stderr. A leak's line says
    /// where the promise was made (see `ConfigurationStore.report`).
    static func writeToStandardError(_ event: LogEvent) {
        switch event {
        case .pendingPromiseDeallocated, .pendingGuaranteeDeallocated:
            if let location = ThreadDrainState.leakBeingReported {
                writeLine("Promises: \(event.message) (made at \(location))")
                return
            }
        case .waitOnMainThread, .cauterized:
            break
        }
        writeLine("Promises: \(event.message)")
    }

    /// Writes `text` and a newline to stderr in as few `write`s as it takes,
    /// unbuffered, so that lines from several threads do not interleave.
    static func writeLine(_ text: String) {
        var line = text
        line.append("\n")
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
