import Foundation
import JobProcesses
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the spawn path's shortcuts must not change: a program
/// found along PATH is remembered for a moment, the environment is packed
/// and checked in one pass, and completions may run on the loop's thread.
@Suite("ProcessRunner: lookups remembered, environments packed, completions on the loop")
struct ProcessLookupTests {
    @Test func aRememberedProgramThatWentAwayIsLookedUpAgain() async throws {
        let folder = try makeTemporaryFolder()
        let script = folder + "/jobd-fleeting"
        try await installScript("#!/bin/sh\necho here\n", at: script)
        var spec = ProcessSpec.argv("jobd-fleeting")
        spec.environment["PATH"] = "/nonexistent:" + folder
        #expect(try await output(of: spec) == Array("here\n".utf8))

        // Gone within the second the path is remembered: the same error as
        // for a program never there, not a failed spawn.
        #expect(unlink(script) == 0)
        let error = try await failure(of: spec)
        #expect(error.code == .executableNotFound)
        #expect(error.description.contains("not on PATH"))
    }

    @Test func aRememberedProgramThatMovedIsFoundWhereItIsNow() async throws {
        let first = try makeTemporaryFolder()
        let second = try makeTemporaryFolder()
        try await installScript("#!/bin/sh\necho first\n", at: first + "/jobd-mover")
        var spec = ProcessSpec.argv("jobd-mover")
        spec.environment["PATH"] = first + ":" + second
        #expect(try await output(of: spec) == Array("first\n".utf8))

        try await installScript("#!/bin/sh\necho second\n", at: second + "/jobd-mover")
        #expect(unlink(first + "/jobd-mover") == 0)
        #expect(try await output(of: spec) == Array("second\n".utf8))
    }

    @Test func aFolderOrAnUnexecutableFileOnPathIsPassedOver() async throws {
        let first = try makeTemporaryFolder()
        let second = try makeTemporaryFolder()
        let third = try makeTemporaryFolder()
        #expect(mkdir(first + "/jobd-passed", 0o755) == 0)
        try await installScript("#!/bin/sh\necho no\n", at: second + "/jobd-passed", mode: "644")
        try await installScript("#!/bin/sh\necho third\n", at: third + "/jobd-passed")
        var spec = ProcessSpec.argv("jobd-passed")
        spec.environment["PATH"] = [first, second, third].joined(separator: ":")
        #expect(try await output(of: spec) == Array("third\n".utf8))
        spec.environment["PATH"] = [first, second].joined(separator: ":")
        let error = try await failure(of: spec)
        #expect(error.code == .notExecutable)
    }

    @Test func aRelativePathEntryIsTakenInTheChildsFolder() async throws {
        let folder = try makeTemporaryFolder()
        #expect(mkdir(folder + "/bin", 0o755) == 0)
        try await installScript("#!/bin/sh\necho relative\n", at: folder + "/bin/jobd-relative")
        var spec = ProcessSpec.argv("jobd-relative")
        spec.environment["PATH"] = "bin"
        spec.workingDirectory = folder
        #expect(try await output(of: spec) == Array("relative\n".utf8))
    }

    @Test func badEnvironmentVariablesAreRefused() async throws {
        for environment in [["A=B": "1"], ["": "1"], ["A": "x\0y"], ["A\0B": "1"]] {
            var spec = ProcessSpec.argv("/bin/true")
            spec.environment = environment
            let error = try await failure(of: spec)
            #expect(error.code == .invalidCommand)
            #expect(error.description.contains("environment variable"))
        }
        // A reserved name is dropped before it is checked, as before.
        var spec = ProcessSpec.argv("/usr/bin/env")
        spec.environment = ["LISTEN_=x": "1", "EMPTY": "", "UNICODE": "é ✓"]
        let lines = String(decoding: try await output(of: spec), as: UTF8.self).split(separator: "\n")
        #expect(lines.sorted() == ["EMPTY=", "UNICODE=é ✓"])
    }

    @Test func completionsOnTheLoopThread() async throws {
        let queue = DispatchQueue(label: "completions")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let runner = ProcessRunner(completionQueue: queue, completesOnLoopThread: true)
        let places = Places()
        for _ in 0..<20 {
            let result = await withCheckedContinuation { continuation in
                runner.run(ProcessSpec.argv("/bin/cat", input: "hi\n")) { result in
                    places.add(DispatchQueue.getSpecific(key: key) == true ? "queue" : "elsewhere")
                    continuation.resume(returning: result)
                }
            }
            #expect(try result.get().output == Array("hi\n".utf8))
        }
        #expect(places.all == ["elsewhere"])
        // A run that cannot start still completes later, on the queue.
        let failed = await withCheckedContinuation { continuation in
            runner.run(ProcessSpec.argv("jobd-no-such-program-42")) { result in
                places.add(DispatchQueue.getSpecific(key: key) == true ? "queue" : "elsewhere")
                continuation.resume(returning: result)
            }
        }
        #expect(throws: ProcessError.self) { try failed.get() }
        #expect(places.all == ["elsewhere", "queue"])
    }
}

private final class Places: Sendable {
    private let names = Mutex<Set<String>>([])
    func add(_ name: String) { _ = names.withLock { $0.insert(name) } }
    var all: Set<String> { names.withLock { $0 } }
}
