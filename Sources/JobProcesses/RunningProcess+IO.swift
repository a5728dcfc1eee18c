import CProcessSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Stdin, stdout and stderr of a `RunningProcess`. Every method runs under
// the state's lock and makes only non-blocking system calls.

extension RunningProcess.State {
    // MARK: stdin

    /// Writes as much input as the pipe takes; when it is full, watches it
    /// for room. EPIPE (the child closed stdin or exited) just ends writing:
    /// a program need not read all of its input.
    mutating func writeInput(in process: RunningProcess) {
        guard stdinOpen else { return }
        while inputOffset < input.count {
            let offset = inputOffset
            let written = input.withUnsafeBytes { raw in
                jobd_write_nosigpipe(process.stdinFD, raw.baseAddress! + offset, raw.count - offset)
            }
            if written > 0 {
                inputOffset += written
                continue
            }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                if stdinToken == nil {
                    stdinToken = process.loop.register(
                        process.stdinFD, events: JOBD_EPOLLOUT, for: process, as: .stdin)
                    if stdinToken == nil { closeStdin(in: process) }  // cannot watch: give up on input
                }
                return
            }
            closeStdin(in: process)  // EPIPE, or the pipe broke otherwise
            return
        }
        wroteAllInput = true
        closeStdin(in: process)
    }

    mutating func closeStdin(in process: RunningProcess) {
        guard stdinOpen else { return }
        stdinOpen = false
        input = []
        if let token = stdinToken {
            process.loop.unregister(process.stdinFD, token: token)
            stdinToken = nil
        }
        _ = close(process.stdinFD)
    }

    // MARK: stdout, stderr

    mutating func readStdout(in process: RunningProcess) {
        guard stdoutOpen else { return }
        let result: PipeReader.Result
        if let sink = process.stdoutLines {
            let now = Date()
            var lines: [OutputLine] = []
            result = PipeReader.drain(process.stdoutFD) { chunk in
                outputLines.split(chunk, at: now, into: &lines)
                return output.append(chunk)
            }
            if !lines.isEmpty { sink.receive(lines) }
        } else {
            result = PipeReader.drain(process.stdoutFD) { chunk in output.append(chunk) }
        }
        switch result {
        case .wouldBlock:
            return
        case .endOfFile:
            closeStdout(in: process)
        case .sinkRefused:
            closeStdout(in: process)
            stop(.outputLimit, grace: process.killGrace, in: process)
        case let .failed(error):
            closeStdout(in: process)
            stop(.ioFailed(error), grace: process.killGrace, in: process)
        }
    }

    mutating func readStderr(in process: RunningProcess) {
        guard stderrOpen else { return }
        let result: PipeReader.Result
        if let sink = process.stderrLines {
            let now = Date()
            var lines: [OutputLine] = []
            result = PipeReader.drain(process.stderrFD) { chunk in
                errorTail.append(chunk)
                errorLines.split(chunk, at: now, into: &lines)
                return true
            }
            if !lines.isEmpty { sink.receive(lines) }
        } else {
            result = PipeReader.drain(process.stderrFD) { chunk in
                errorTail.append(chunk)
                return true
            }
        }
        switch result {
        case .wouldBlock, .sinkRefused:
            return
        case .endOfFile:
            closeStderr(in: process)
        case let .failed(error):
            closeStderr(in: process)
            stop(.ioFailed(error), grace: process.killGrace, in: process)
        }
    }

    mutating func closeStdout(in process: RunningProcess) {
        guard stdoutOpen else { return }
        stdoutOpen = false
        if let sink = process.stdoutLines, let last = outputLines.finish(at: Date()) {
            sink.receive([last])
        }
        if let token = stdoutToken {
            process.loop.unregister(process.stdoutFD, token: token)
            stdoutToken = nil
        }
        _ = close(process.stdoutFD)
    }

    mutating func closeStderr(in process: RunningProcess) {
        guard stderrOpen else { return }
        stderrOpen = false
        if let sink = process.stderrLines, let last = errorLines.finish(at: Date()) {
            sink.receive([last])
        }
        if let token = stderrToken {
            process.loop.unregister(process.stderrFD, token: token)
            stderrToken = nil
        }
        _ = close(process.stderrFD)
    }
}
