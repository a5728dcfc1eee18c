import CSpawn

#if canImport(Glibc)
import Glibc
#endif

/// What descriptor 0, 1 or 2 of a child becomes.
enum ChildStream {
    /// The test process's own.
    case inherit
    case open(String, Int32)
    /// A descriptor of the test process (close-on-exec there); 1 for stderr's `2>&1`.
    case dup(Int32)
}

/// posix_spawn: `streams` become the child's 0, 1 and 2 (and 3, 4, … when
/// there are more: descriptors passed on), every other descriptor is closed, the signal mask is empty and every signal has its
/// default action. Returns the pid.
func posixSpawn(
    _ executable: String, _ arguments: [String], environment: [String], directory: String?,
    streams: [ChildStream], ownProcessGroup: Bool
) throws(SpawnError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }

    for (fd, stream) in zip(Int32(0)..., streams) {
        switch stream {
        case .inherit: break
        case .open(let path, let flags): posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o644)
        // The copy is not close-on-exec.
        case .dup(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
        }
    }
    spawn_add_closefrom(&actions, Int32(max(3, streams.count)))
    // Last, so that the files above are opened relative to the test's own directory.
    if let directory { spawn_add_chdir(&actions, directory) }

    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigdefault(&attributes, &all)
    var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
    if ownProcessGroup {
        flags |= POSIX_SPAWN_SETPGROUP
        posix_spawnattr_setpgroup(&attributes, 0)
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))

    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    // glibc reports a failed exec (ENOENT, EACCES, …) here too.
    let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    guard code == 0 else { throw SpawnError(executable, "cannot run it", errno: code) }
    return pid
}

/// The pipes of one child while it is being started: the child's ends are
/// closed once it has them, ours are handed to the pump (or closed on failure).
struct Pipes {
    private(set) var childEnds: [Int32] = []
    /// Our (non-blocking) end of stdin's pipe.
    private(set) var input: Int32?
    /// Our ends of the output pipes: stdout (0), stderr (1).
    private(set) var outputs: [(fd: Int32, index: Int)] = []

    /// A pipe the child reads as stdin; returns its end.
    mutating func makeInput(_ executable: String) throws(SpawnError) -> Int32 {
        let (read, write) = try make(executable)
        _ = fcntl(write, F_SETFL, O_NONBLOCK)
        input = write
        childEnds.append(read)
        return read
    }

    /// A pipe the child writes as stdout (0) or stderr (1); returns its end.
    mutating func makeOutput(_ index: Int, _ executable: String) throws(SpawnError) -> Int32 {
        let (read, write) = try make(executable)
        outputs.append((read, index))
        childEnds.append(write)
        return write
    }

    /// Close-on-exec: no child spawned meanwhile by another thread inherits it.
    private func make(_ executable: String) throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard spawn_pipe_cloexec(&fds) == 0 else { throw SpawnError(executable, "no pipe", errno: errno) }
        return (fds[0], fds[1])
    }

    mutating func closeChildEnds() {
        childEnds.forEach { close($0) }
        childEnds = []
    }

    mutating func closeAll() {
        closeChildEnds()
        ([input].compactMap { $0 } + outputs.map(\.fd)).forEach { close($0) }
        input = nil
        outputs = []
    }
}

/// The child could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public var description: String

    init(_ executable: String, _ what: String, errno code: Int32) {
        description = "\(executable): \(what): \(String(cString: strerror(code)))"
    }
}
