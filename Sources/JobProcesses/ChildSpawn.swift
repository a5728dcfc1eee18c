import CProcessSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The C shim's spawn (clone on the caller's stack, then exec; see `jobd_spawn`).
enum ChildSpawn {
    /// Spawns `path` with the packed argv and environment; returns the pid
    /// and a pidfd for it (nil where the kernel cannot give one), or the
    /// errno of what failed (exec's, for a program that cannot run).
    static func spawn(
        path: String, strings: ExecStrings, directory: String?, stdin: Int32, stdout: Int32, stderr: Int32
    ) -> Result<(pid: pid_t, pidfd: Int32?), SpawnErrno> {
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let rc: Int32
        if let directory {
            rc = jobd_spawn(path, strings.argv, strings.envp, directory, stdin, stdout, stderr, &pid, &pidfd)
        } else {
            rc = jobd_spawn(path, strings.argv, strings.envp, nil, stdin, stdout, stderr, &pid, &pidfd)
        }
        return rc == 0 ? .success((pid, pidfd >= 0 ? pidfd : nil)) : .failure(SpawnErrno(value: rc))
    }

    struct SpawnErrno: Error {
        var value: Int32
    }
}

/// A child's argv and environment as execve takes them: NUL-terminated
/// strings and the two NULL-terminated pointer arrays into them, all in one
/// allocation, checked as they are copied — no argument with a NUL byte, no
/// variable with an empty name, `=` in its name or a NUL byte — and without
/// the names the daemon must keep (`ProcessEnvironment.isReserved`).
/// (A String and a strdup per variable cost ~10 µs a process.)
final class ExecStrings {
    let argv: UnsafePointer<UnsafeMutablePointer<CChar>?>
    let envp: UnsafePointer<UnsafeMutablePointer<CChar>?>
    private let block: UnsafeMutableRawPointer

    private init(
        block: UnsafeMutableRawPointer, argv: UnsafePointer<UnsafeMutablePointer<CChar>?>,
        envp: UnsafePointer<UnsafeMutablePointer<CChar>?>
    ) {
        self.block = block
        self.argv = argv
        self.envp = envp
    }

    static func pack(
        arguments: [String], environment: [String: String], command: String
    ) throws(ProcessError) -> ExecStrings {
        guard !arguments.isEmpty else {
            throw ProcessError(
                code: .invalidCommand, message: "cannot run an empty argv; `run` needs a program", command: command)
        }
        var bytes = 0
        var variables = 0
        for argument in arguments { bytes += argument.utf8.count + 1 }
        for (name, value) in environment where !ProcessEnvironment.isReserved(name) {
            bytes += name.utf8.count + value.utf8.count + 2
            variables += 1
        }
        let pointerCount = arguments.count + 1 + variables + 1
        let pointerBytes = pointerCount * MemoryLayout<UnsafeMutablePointer<CChar>?>.stride
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: pointerBytes + bytes, alignment: MemoryLayout<UnsafeMutablePointer<CChar>?>.alignment)
        let pointers = block.bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: pointerCount)
        let text = (block + pointerBytes).bindMemory(to: CChar.self, capacity: bytes)

        var offset = 0
        var slot = 0
        /// Copies `string`'s bytes at `offset`; false when one is NUL (or `=`, for a name).
        func copy(_ string: String, refusingEquals: Bool = false) -> Bool {
            let start = text + offset
            let count = string.utf8.count
            let copied: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
                if let base = bytes.baseAddress { memcpy(start, base, bytes.count) }
            }
            if copied == nil {
                for (index, byte) in string.utf8.enumerated() { start[index] = CChar(bitPattern: byte) }
            }
            offset += count
            guard count > 0 else { return true }
            if memchr(start, 0, count) != nil { return false }
            return !(refusingEquals && memchr(start, Int32(UInt8(ascii: "=")), count) != nil)
        }
        var failure: ProcessError?
        for argument in arguments {
            pointers[slot] = text + offset
            slot += 1
            if !copy(argument) {
                failure = ProcessError(
                    code: .invalidCommand, message: "cannot run `\(command)`: an argument holds a NUL byte",
                    command: command)
            }
            text[offset] = 0
            offset += 1
        }
        pointers[slot] = nil
        slot += 1
        for (name, value) in environment where failure == nil && !ProcessEnvironment.isReserved(name) {
            pointers[slot] = text + offset
            slot += 1
            let cleanName = copy(name, refusingEquals: true)
            text[offset] = CChar(bitPattern: UInt8(ascii: "="))
            offset += 1
            let cleanValue = copy(value)
            text[offset] = 0
            offset += 1
            if name.isEmpty || !cleanName || !cleanValue {
                failure = ProcessError(
                    code: .invalidCommand,
                    message:
                        "cannot run `\(command)`: environment variable `\(name)` has an empty name, or holds `=` in its name or a NUL byte",
                    command: command)
            }
        }
        pointers[slot] = nil
        if let failure {
            block.deallocate()
            throw failure
        }
        return ExecStrings(
            block: block, argv: UnsafePointer(pointers), envp: UnsafePointer(pointers + arguments.count + 1))
    }

    deinit {
        block.deallocate()
    }
}
