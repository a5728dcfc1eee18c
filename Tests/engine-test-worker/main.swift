// A child process running an engine, for the tests that must not share a
// process with the rest: the crash-resume tests kill it with SIGKILL mid-run;
// the finalizer test sets the process-wide `conf.leakHandler` through it.
//
//     engine-test-worker DATABASE DEFINITIONS-FOLDER [--lease-ms N] [--lose STAGE] [--log PATH]
//
// `--lose STAGE`: stages of that name run an action that drops its resolver
// (the promise is deallocated while pending). `--log PATH`: the engine's log
// lines are appended there (else to stderr). Runs until killed.
import Dispatch
import Foundation
import JobConfig
import JobEngine
import JobProcesses
import JobStore
import JobStoreSQLite
import Logging
import Promises
import TestSupport

var positional: [String] = []
var options: [String: String] = [:]
var rest = CommandLine.arguments.dropFirst()[...]
while let argument = rest.popFirst() {
    if argument.hasPrefix("--"), let value = rest.popFirst() {
        options[String(argument.dropFirst(2))] = value
    } else {
        positional.append(argument)
    }
}
guard positional.count == 2 else {
    FileHandle.standardError.write(
        Data(
            "usage: engine-test-worker DATABASE DEFINITIONS-FOLDER [--lease-ms N] [--lose STAGE] [--log PATH]\n".utf8))
    exit(2)
}
let database = positional[0]
let folder = positional[1]
let leaseMs = Int64(options["lease-ms"] ?? "") ?? 1000
let lose = options["lose"]
let logFile = options["log"].flatMap { path -> FileHandle? in
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return FileHandle(forWritingAtPath: path)
}
let logTo = logFile ?? FileHandle.standardError

let set = DefinitionLoader().loadFolder(folder)
for problem in set.diagnostics {
    FileHandle.standardError.write(Data("\(problem)\n".utf8))
}

/// An action that loses its resolver: its promise is deallocated pending.
func losingAction(_ jobID: Int64, _ stage: StageDefinition, _ input: [UInt8]) -> Promise<[UInt8]>? {
    guard stage.name == lose else { return nil }
    return Promise<[UInt8]>.pending().promise
}

do {
    let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: database))
    let logger = Logger(label: "engine-test-worker") { _ in
        LineLogHandler { line in logTo.write(Data((line + "\n").utf8)) }
    }
    // What the daemon does for the process: the finalizer's handler.
    conf.leakHandler = Engine.leakHandler(logger: logger)
    let engine = Engine(
        configuration: EngineConfiguration(
            killGrace: .milliseconds(200), leaseDuration: .milliseconds(leaseMs),
            renewInterval: .milliseconds(leaseMs / 4),
            pollInterval: .milliseconds(200), logger: logger),
        definitions: set.definitions, store: store, processRunner: ProcessRunner(completesOnLoopThread: true),
        customAction: lose == nil ? nil : losingAction)
    engine.start()
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    withExtendedLifetime((store, engine)) { dispatchMain() }
} catch {
    FileHandle.standardError.write(Data("engine-test-worker: \(error)\n".utf8))
    exit(1)
}
