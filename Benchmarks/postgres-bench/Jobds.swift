import Foundation
import JobControl
import Spawn

#if canImport(Glibc)
import Glibc
#endif

/// A real `jobd` process on the throwaway server: a folder of its own with
/// its jobd.yaml, definitions, socket and log, and a node name.
final class JobdProcess: @unchecked Sendable {
    // @unchecked Sendable: used by the benchmark's main flow only, one call at a time.
    let node: String
    let folder: String
    private let jobd: String
    private(set) var process: SpawnedProcess?

    init(jobd: String, node: String, database: String, pool: Int, definitions: [String: String]) throws {
        self.node = node
        folder =
            NSTemporaryDirectory() + "postgres-bench-\(node)-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        try FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: true)
        try """
        database: \(database)
        node: \(node)
        definitions: jobs.d
        socket: jobd.sock
        pools: { default: \(pool) }
        log: { level: warning }
        """.write(toFile: folder + "/jobd.yaml", atomically: true, encoding: .utf8)
        for (name, yaml) in definitions {
            try yaml.write(toFile: folder + "/jobs.d/\(name).yaml", atomically: true, encoding: .utf8)
        }
        self.jobd = jobd
        _ = FileManager.default.createFile(atPath: folder + "/jobd.log", contents: nil)
    }

    func start() throws {
        process = try SpawnedProcess(
            jobd, ["--config", folder + "/jobd.yaml"], stdout: .null, stderr: .file(folder + "/jobd.log"))
    }

    /// Started and not ended yet.
    var isRunning: Bool { process?.isRunning ?? false }

    /// Waits until jobd answers on its socket (it does once it is ready).
    func waitReady(within seconds: Double = 60) throws {
        let deadline = Date() + seconds
        while (try? ControlClient.status(socketPath: folder + "/jobd.sock")) == nil {
            guard Date() < deadline, isRunning else {
                throw BenchError("jobd \(node) did not start: \(log)")
            }
            usleep(10_000)
        }
    }

    var log: String { (try? String(contentsOfFile: folder + "/jobd.log", encoding: .utf8)) ?? "" }

    /// SIGTERM, then its exit status; the folder stays, for a start again.
    func terminate() -> Int32 {
        process?.signal(SIGTERM)
        let termination = process?.wait()
        process = nil
        return termination?.status ?? 0
    }

    /// SIGTERM, then its exit status; the folder is removed.
    func stop() -> Int32 {
        let status = terminate()
        try? FileManager.default.removeItem(atPath: folder)
        return status
    }
}
