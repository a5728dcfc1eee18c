import Dispatch
import Foundation
import JobValues

/// The middle value (the mean of the two middle ones for an even count).
public func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty, "median of no values")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The value below which a share `p` (0...1) of `values` lies.
public func percentile(_ values: [Double], _ p: Double) -> Double {
    precondition(!values.isEmpty, "percentile of no values")
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Wall-clock time, and the CPU time this process used meanwhile: on a
/// machine shared with other work, CPU per operation is the steadier figure.
public struct Stopwatch: Sendable {
    public let wall = ContinuousClock.now
    public let cpu = Machine.cpuSecondsOfThisProcess()
    public let childrenCPU = Machine.cpuSecondsOfReapedChildren()

    public init() {}

    public var elapsedSeconds: Double { (ContinuousClock.now - wall).timeInterval }
    public var cpuSeconds: Double { Machine.cpuSecondsOfThisProcess() - cpu }
    /// CPU time of the children reaped meanwhile (they count once reaped).
    public var childrenCPUSeconds: Double { Machine.cpuSecondsOfReapedChildren() - childrenCPU }
}

/// Blocks the calling thread on async work (a benchmark's own driver only).
public func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    do {
        return try box.result!.get()
    } catch {
        fatalError("\(error)")
    }
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: written once before the semaphore is signalled,
    // read once after it is waited for.
    var result: Result<T, any Error>?
}

/// A new folder under the temporary directory, named `prefix-…`.
public func temporaryFolder(_ prefix: String) -> String {
    let path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        fatalError("cannot create \(path): \(error)")
    }
    return path
}
