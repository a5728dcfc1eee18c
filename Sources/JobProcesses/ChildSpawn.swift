import CProcessSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// posix_spawn through the C shim, with Swift strings turned into the
/// NULL-terminated arrays it needs.
enum ChildSpawn {
    /// Spawns `path` with the given argv and environment; returns the pid or
    /// the errno posix_spawn reported (exec's, for a program that cannot run).
    static func spawn(
        path: String, arguments: [String], environment: [String: String], directory: String?,
        stdin: Int32, stdout: Int32, stderr: Int32
    ) -> Result<pid_t, SpawnErrno> {
        let environmentLines = environment.map { "\($0.key)=\($0.value)" }
        return withCStringArray(arguments) { argv in
            withCStringArray(environmentLines) { envp in
                var pid: pid_t = 0
                let rc: Int32
                if let directory {
                    rc = jobd_spawn(path, argv, envp, directory, stdin, stdout, stderr, &pid)
                } else {
                    rc = jobd_spawn(path, argv, envp, nil, stdin, stdout, stderr, &pid)
                }
                return rc == 0 ? .success(pid) : .failure(SpawnErrno(value: rc))
            }
        }
    }

    struct SpawnErrno: Error {
        var value: Int32
    }

    private static func withCStringArray<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
