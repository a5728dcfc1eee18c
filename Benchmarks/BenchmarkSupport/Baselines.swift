import CBenchSupport

/// The baselines that benchmarks measure in the same run as the code under
/// test, so that a target is a ratio and holds on a slower or busier
/// machine. One function each; a benchmark's target names the baseline it
/// divides by.
public enum Baselines {
    /// `count` times, one after the other: posix_spawn `/bin/cat` with stdin
    /// and stdout pipes, write `input`, read stdout to EOF, waitpid — the
    /// least a caller must do to run a process (CBenchSupport). Returns
    /// processes per second.
    public static func plainSpawnLoop(_ count: Int, input: [UInt8]) -> Double {
        input.withUnsafeBufferPointer { bench_plain_spawn_loop(Int32(count), $0.baseAddress, $0.count) }
    }
}

/// Bytes malloc has handed out and not yet had back (malloc chunks,
/// headers and rounding included).
public func heapBytesInUse() -> Int { Int(bench_heap_bytes_in_use()) }
