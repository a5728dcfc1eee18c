import CProcessSupport
import Foundation
import Locking
import Synchronization

/// One thread, blocked in `epoll_wait`, watching every child's pipes, pidfd
/// and timerfd, so no thread ever waits on a single process or timer.
///
/// Why not DispatchSource read/write sources: on Linux, libdispatch's epoll
/// bookkeeping frees a registration's `dispatch_muxnote` while the manager
/// thread may still hold a pointer to it when sources are created and
/// cancelled from many threads at once (swift-corelibs-libdispatch issue
/// #949; swift-subprocess left DispatchIO for the same reason). The test
/// suite crashed in `_dispatch_event_loop_drain` that way. Here each
/// registration is a 64-bit token looked up in `targets` when its event is
/// handled: an event for a registration removed meanwhile finds nothing.
///
/// Handlers run on this thread under their process's lock and only make
/// non-blocking system calls; completions are sent to a dispatch queue.
///
/// Each `ProcessRunner` has one: its thread ends once the runner and every
/// process it started have let go of the loop.
final class ProcessEventLoop: Sendable {
    enum Role: Sendable {
        case stdin, stdout, stderr, exit, timer
    }

    struct Target: Sendable {
        let process: RunningProcess
        let role: Role
    }

    private let core: Core

    init() {
        core = Core()
        let core = self.core
        let thread = Thread { core.run() }
        thread.name = "jobd-process-io"
        thread.start()
    }

    deinit {
        core.stop()
    }

    /// Watches `fd` for `events` on behalf of `process`; returns the token to
    /// unregister with, or nil with errno set.
    func register(_ fd: Int32, events: UInt32, for process: RunningProcess, as role: Role) -> UInt64? {
        core.register(fd, events: events, target: Target(process: process, role: role))
    }

    /// Stops watching `fd` (call before closing it).
    func unregister(_ fd: Int32, token: UInt64) {
        core.unregister(fd, token: token)
    }

    /// The epoll descriptor, the registrations and the thread's loop: what
    /// the thread holds, so that the loop itself can go away and stop it.
    private final class Core: Sendable {
        private struct Registry {
            var nextToken: UInt64 = 1
            var targets: [UInt64: Target] = [:]
        }

        /// Token 0: the stop pipe's read end.
        private static let stopToken: UInt64 = 0

        private let epollFD: Int32
        /// Written once by `stop`; its read end is watched with token 0.
        private let stopPipe: [Int32]
        private let registry = Mutex(Registry())

        init() {
            epollFD = jobd_epoll_create()
            precondition(epollFD >= 0, "jobd: epoll_create1 failed: \(String(cString: strerror(errno)))")
            var fds: [Int32] = [-1, -1]
            precondition(jobd_pipe(&fds, 0) == 0, "jobd: pipe failed: \(String(cString: strerror(errno)))")
            stopPipe = fds
            precondition(
                jobd_epoll_add(epollFD, fds[0], JOBD_EPOLLIN, Self.stopToken) == 0,
                "jobd: epoll_ctl failed: \(String(cString: strerror(errno)))")
        }

        func register(_ fd: Int32, events: UInt32, target: Target) -> UInt64? {
            let token = registry.withAnnouncedLock { registry in
                let token = registry.nextToken
                registry.nextToken += 1
                registry.targets[token] = target
                return token
            }
            guard jobd_epoll_add(epollFD, fd, events, token) == 0 else {
                let error = errno
                _ = registry.withAnnouncedLock { $0.targets.removeValue(forKey: token) }
                errno = error
                return nil
            }
            return token
        }

        func unregister(_ fd: Int32, token: UInt64) {
            _ = jobd_epoll_del(epollFD, fd)
            _ = registry.withAnnouncedLock { $0.targets.removeValue(forKey: token) }
        }

        /// Ends `run` (every process that registered is gone: each holds the loop).
        func stop() {
            var byte: UInt8 = 1
            _ = write(stopPipe[1], &byte, 1)
        }

        func run() {
            let capacity = 64
            var tokens = [UInt64](repeating: 0, count: capacity)
            var events = [UInt32](repeating: 0, count: capacity)
            while true {
                let count = tokens.withUnsafeMutableBufferPointer { tokens in
                    events.withUnsafeMutableBufferPointer { events in
                        jobd_epoll_wait(epollFD, tokens.baseAddress, events.baseAddress, Int32(capacity), -1)
                    }
                }
                guard count > 0 else { continue }
                for index in 0..<Int(count) {
                    let token = tokens[index]
                    if token == Self.stopToken {
                        for fd in stopPipe + [epollFD] { _ = close(fd) }
                        return
                    }
                    guard let target = registry.withAnnouncedLock({ $0.targets[token] }) else { continue }
                    target.process.handle(target.role, events: events[index])
                }
            }
        }
    }
}
