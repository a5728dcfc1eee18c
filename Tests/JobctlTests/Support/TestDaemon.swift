import Foundation
import JobEngine
import JobStore

/// A stand-in for jobd in the test process: an engine on the sandbox's
/// database and definitions, and the control socket, whose nudges reach
/// the engine. Its poll interval is long, so a job starts quickly only if
/// jobctl's nudge arrives.
final class TestDaemon: Sendable {
    let store: SQLiteJobStore
    let engine: Engine
    let socket: FakeDaemon

    init(_ sandbox: Sandbox, pollInterval: Duration = .seconds(30)) throws {
        let configuration = try sandbox.configuration()
        var config = configuration.daemon
        config.killGrace = .milliseconds(200)
        store = try SQLiteJobStore(JobStoreConfiguration(
            path: config.database, maxValueBytes: config.store.valueCap.bytes, checkpointInterval: nil))
        var options = EngineOptions(
            leaseDuration: .seconds(5), renewInterval: .milliseconds(100), pollInterval: pollInterval)
        // `conf` is process-wide; other suites check its defaults.
        options.configuresPromises = false
        let engine = Engine(config: config, definitions: configuration.definitions.definitions, store: store,
                            options: options)
        self.engine = engine
        socket = try FakeDaemon(path: config.socket) { engine.nudge() }
        engine.start()
    }

    func stop() async {
        socket.stop()
        await engine.drain(grace: .zero)
        try? await store.close()
    }
}
