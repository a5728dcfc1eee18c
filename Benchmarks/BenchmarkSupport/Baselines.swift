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

    /// The same `count` runs shared by `threads` threads, each doing one run
    /// after another: what the machine can do with processes when every
    /// core spawns (the machine's ceiling). Returns processes per second.
    public static func plainSpawnThreads(_ count: Int, threads: Int, input: [UInt8]) -> Double {
        input.withUnsafeBufferPointer {
            bench_plain_spawn_threads(Int32(count), Int32(threads), $0.baseAddress, $0.count)
        }
    }

    /// The thread count among 1×, 2× and 4× the cores at which
    /// `plainSpawnThreads` is fastest on this machine now (the best of
    /// `tries` runs of `count` each), and each count's best rate.
    public static func fastestPlainThreads(
        _ count: Int, input: [UInt8], tries: Int = 3
    ) -> (threads: Int, rates: [(threads: Int, rate: Double)]) {
        let candidates = [Machine.cores, 2 * Machine.cores, 4 * Machine.cores]
        var best = Array(repeating: 0.0, count: candidates.count)
        for _ in 0..<tries {
            for (index, threads) in candidates.enumerated() {
                best[index] = max(best[index], plainSpawnThreads(count, threads: threads, input: input))
            }
        }
        let fastest = best.indices.max { best[$0] < best[$1] }!
        return (candidates[fastest], Array(zip(candidates, best)).map { (threads: $0.0, rate: $0.1) })
    }
}

/// Bytes malloc has handed out and not yet had back (malloc chunks,
/// headers and rounding included).
public func heapBytesInUse() -> Int { Int(bench_heap_bytes_in_use()) }
