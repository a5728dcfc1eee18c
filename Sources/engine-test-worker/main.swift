// A child process running an engine, for the crash-resume tests: they kill
// it with SIGKILL mid-run and start another engine on the same database.
//
//     engine-test-worker DATABASE DEFINITIONS-FOLDER [LEASE-MS]
//
// Prints `ready` on stdout once the engine has started, then runs until killed.
import Dispatch
import Foundation
import JobEngine
import JobStore

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: engine-test-worker DATABASE DEFINITIONS-FOLDER [LEASE-MS]\n".utf8))
    exit(2)
}
let database = arguments[1]
let folder = arguments[2]
let leaseMs = arguments.count > 3 ? Int64(arguments[3]) ?? 1000 : 1000

var config = DaemonConfig.defaults(relativeTo: folder)
config.database = database
config.killGrace = .milliseconds(200)
let set = DefinitionLoader(config: config).loadFolder(folder)
for problem in set.diagnostics {
    FileHandle.standardError.write(Data("\(problem)\n".utf8))
}
do {
    let store = try SQLiteJobStore(JobStoreConfiguration(path: database))
    let engine = Engine(
        config: config, definitions: set.definitions, store: store,
        options: EngineOptions(
            leaseDuration: .milliseconds(leaseMs), renewInterval: .milliseconds(leaseMs / 4),
            pollInterval: .milliseconds(200), installsProcessHooks: true),
        log: { record in FileHandle.standardError.write(Data("worker: \(record)\n".utf8)) })
    engine.start()
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    withExtendedLifetime((store, engine)) { dispatchMain() }
} catch {
    FileHandle.standardError.write(Data("engine-test-worker: \(error)\n".utf8))
    exit(1)
}
