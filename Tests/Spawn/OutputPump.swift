import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One thread per child that writes its stdin bytes and reads its stdout
/// and stderr pipes, all in one poll(2) loop, until each pipe ended: the
/// child never waits on a full pipe, and the caller never waits on the pipes.
final class OutputPump: Sendable {
    let captured = Mutex(SpawnedProcess.Captured())
    private let ended = DispatchSemaphore(value: 0)

    /// Takes our ends of the pipes (see ``Pipes``) and closes each as it ends.
    init(input: (fd: Int32, bytes: [UInt8])?, outputs: [(fd: Int32, index: Int)]) {
        captured.withLock { captured in
            captured.stdoutEnded = !outputs.contains { $0.index == 0 }
            captured.stderrEnded = !outputs.contains { $0.index == 1 }
        }
        Thread.detachNewThread { [self] in
            run(input: input, outputs: outputs)
            ended.signal()
        }
    }

    /// Blocks until every pipe ended.
    func waitForEnd() {
        ended.wait()
        ended.signal()
    }

    private func run(input: (fd: Int32, bytes: [UInt8])?, outputs: [(fd: Int32, index: Int)]) {
        // A child that exits without reading all its stdin makes our write
        // fail with EPIPE; the SIGPIPE that comes with it stays blocked on
        // this thread (and goes with it), never reaching the test process.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)

        var input = input
        var written = 0
        var open = outputs
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        if let (fd, bytes) = input, bytes.isEmpty {
            close(fd)
            input = nil
        }
        while input != nil || !open.isEmpty {
            var fds = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if let input { fds.append(pollfd(fd: input.fd, events: Int16(POLLOUT), revents: 0)) }
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 else {
                if errno == EINTR { continue }
                break  // Not with valid descriptors.
            }
            if let (fd, bytes) = input, fds[open.count].revents != 0 {
                let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                if count > 0 { written += count }
                if written == bytes.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                    close(fd)
                    input = nil
                }
            }
            for position in open.indices.reversed() where fds[position].revents != 0 {
                let count = read(fds[position].fd, &buffer, buffer.count)
                if count > 0 {
                    keep(buffer[..<count], from: open[position].index)
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(open[position].fd)
                    end(open.remove(at: position).index)
                }
            }
        }
        // Only if poll itself failed.
        if let input { close(input.fd) }
        for output in open {
            close(output.fd)
            end(output.index)
        }
    }

    private func keep(_ chunk: ArraySlice<UInt8>, from index: Int) {
        captured.withLock { index == 0 ? $0.stdout.append(contentsOf: chunk) : $0.stderr.append(contentsOf: chunk) }
    }

    private func end(_ index: Int) {
        captured.withLock { if index == 0 { $0.stdoutEnded = true } else { $0.stderrEnded = true } }
    }
}
