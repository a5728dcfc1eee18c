import Foundation
import JobProcesses
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("ProcessRunner: data in, data out")
struct ProcessRunnerTests {
    @Test func catEchoesStdinIncludingNULAndNonUTF8() async throws {
        let bytes: [UInt8] = [0x61, 0x00, 0x62, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a, 0x00]
        let out = try await output(of: ProcessSpec(.argv(["cat"]), input: bytes))
        #expect(out == bytes)
    }

    @Test func tenMegabytesRoundTripOverARaisedCap() async throws {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 10 * 1024 * 1024)
        for index in stride(from: 0, to: bytes.count, by: 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { word in
                for offset in 0..<8 { bytes[index + offset] = word[offset] }
            }
        }
        #expect(bytes.contains(0))
        var spec = ProcessSpec(.argv(["cat"]), input: bytes)
        spec.outputLimit = 16 * 1024 * 1024
        let outcome = try await runToCompletion(spec).get()
        #expect(outcome.output.count == bytes.count)
        #expect(outcome.output == bytes)
        #expect(outcome.wroteAllInput)
    }

    @Test func shellScriptGetsTheValueOnStdin() async throws {
        let out = try await output(of: .shell("tr a-z A-Z", input: "hello\n"))
        #expect(out == Array("HELLO\n".utf8))
    }

    @Test(arguments: [
        "$(touch MARKER)", "; touch MARKER", "`touch MARKER`", "'; touch MARKER; '", "\"; touch MARKER #",
    ])
    func hostileInputStaysData(template: String) async throws {
        let marker = temporaryPath("hostile")
        let input = template.replacingOccurrences(of: "MARKER", with: marker) + "\n; rm -rf /\n"
        for spec in [
            ProcessSpec.shell("cat", input: input), .argv("cat", input: input),
            .shell("read -r line; printf '%s\\n' \"$line\"; cat", input: input),
        ] {
            let out = try await output(of: spec)
            #expect(out == Array(input.utf8))
        }
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func childThatReadsNothingDoesNotHurtUs() async throws {
        // 10 MB into `true`, which exits at once: EPIPE must be handled
        // (a SIGPIPE would kill the test process).
        let spec = ProcessSpec(.argv(["true"]), input: [UInt8](repeating: 7, count: 10 << 20))
        let outcome = try await runToCompletion(spec).get()
        #expect(outcome.output.isEmpty)
        #expect(!outcome.wroteAllInput)
    }

    @Test func nonZeroExitNamesTheStatusAndCarriesStderr() async throws {
        let error = try await failure(of: .shell("echo partial; echo 'disk full' >&2; exit 3"))
        #expect(error.code == .nonZeroExit)
        #expect(error.termination == .exited(3))
        #expect(String(decoding: error.stderrTail, as: UTF8.self) == "disk full\n")
        #expect(error.description.contains("exited with status 3"))
        #expect(error.description.contains("disk full"))
    }

    @Test func stderrKeepsOnlyItsTail() async throws {
        var spec = ProcessSpec.shell("head -c 100000 /dev/zero | tr '\\0' x >&2; echo THE-END >&2; exit 1")
        spec.stderrTailLimit = 4096
        let error = try await failure(of: spec)
        #expect(error.stderrTail.count == 4096)
        #expect(String(decoding: error.stderrTail.suffix(8), as: UTF8.self) == "THE-END\n")
        #expect(error.stderrTail.prefix(4088).allSatisfy { $0 == UInt8(ascii: "x") })
    }

    @Test func deathBySignalIsNamed() async throws {
        let error = try await failure(of: .shell("kill -SEGV $$"))
        #expect(error.code == .signaled)
        #expect(error.termination == .signaled(SIGSEGV))
        #expect(error.description.contains("SIGSEGV (11)"))
    }

    @Test func successKeepsStderrTailToo() async throws {
        let outcome = try await runToCompletion(.shell("echo warning >&2; echo ok")).get()
        #expect(outcome.output == Array("ok\n".utf8))
        #expect(outcome.stderrTail == Array("warning\n".utf8))
    }
}

@Suite("ProcessRunner: programs, folders, environment, descriptors")
struct ProcessLaunchTests {
    @Test func missingExecutableOnPath() async throws {
        let error = try await failure(of: .argv("jobd-no-such-program-42"))
        #expect(error.code == .executableNotFound)
        #expect(error.description.contains("jobd-no-such-program-42"))
        #expect(error.description.contains("not on PATH"))
    }

    @Test func missingExecutablePath() async throws {
        let error = try await failure(of: .argv("/nonexistent/bin/tool"))
        #expect(error.code == .executableNotFound)
        #expect(error.description.contains("/nonexistent/bin/tool does not exist"))
    }

    @Test func fileWithoutExecuteBitAndFolderAreRefused() async throws {
        let folder = try makeTemporaryFolder()
        let script = folder + "/script"
        try await installScript("#!/bin/sh\necho hi\n", at: script, mode: "644")
        let error = try await failure(of: .argv(script))
        #expect(error.code == .notExecutable)
        #expect(error.description.contains("not executable"))
        let folderError = try await failure(of: .argv(folder))
        #expect(folderError.code == .notExecutable)
    }

    @Test func bareNameIsLookedUpOnTheChildsPath() async throws {
        let folder = try makeTemporaryFolder()
        let script = folder + "/jobd-hello"
        try await installScript("#!/bin/sh\necho hello from path\n", at: script)
        var spec = ProcessSpec.argv("jobd-hello")
        spec.environment["PATH"] = "/nonexistent:" + folder
        #expect(try await output(of: spec) == Array("hello from path\n".utf8))
    }

    @Test func emptyArgvAndNULInArgumentsAreRejected() async throws {
        #expect(try await failure(of: ProcessSpec(.argv([]))).code == .invalidCommand)
        #expect(try await failure(of: ProcessSpec(.argv(["echo", "a\0b"]))).code == .invalidCommand)
    }

    @Test func workingDirectory() async throws {
        let folder = try makeTemporaryFolder()
        var spec = ProcessSpec.argv("/bin/pwd")
        spec.workingDirectory = folder
        let out = String(decoding: try await output(of: spec), as: UTF8.self)
        #expect(out == URL(fileURLWithPath: folder).resolvingSymlinksInPath().path + "\n")

        spec.workingDirectory = folder + "/missing"
        let error = try await failure(of: spec)
        #expect(error.code == .workingDirectoryMissing)
        #expect(error.description.contains(folder + "/missing"))
    }

    @Test func environmentHasJobVariablesAndNoSystemdHandOver() async throws {
        // The daemon's environment as systemd would leave it. (Not setenv:
        // tests run in parallel, and setenv while another thread reads
        // environ can crash the test process.)
        var parent = ProcessEnvironment.inherited()
        parent["NOTIFY_SOCKET"] = "/run/systemd/notify"
        parent["WATCHDOG_USEC"] = "30000000"
        parent["WATCHDOG_PID"] = "\(getpid())"
        parent["LISTEN_FDS"] = "1"
        parent["LISTEN_PID"] = "\(getpid())"
        parent["LISTEN_FDNAMES"] = "jobd"
        var spec = ProcessSpec.argv("env")
        spec.environment = ProcessEnvironment.forStage(
            base: parent, jobID: 42, stage: "fetch", attempt: 2,
            stageEnvironment: ["REGION": "eu", "JOBD_STAGE": "spoofed", "WATCHDOG_EXTRA": "1"])
        let lines = Set(
            String(decoding: try await output(of: spec), as: UTF8.self).split(separator: "\n").map(String.init))
        #expect(lines.contains("JOBD_JOB_ID=42"))
        #expect(lines.contains("JOBD_STAGE=fetch"))
        #expect(lines.contains("JOBD_ATTEMPT=2"))
        #expect(lines.contains("REGION=eu"))
        #expect(lines.contains { $0.hasPrefix("PATH=") })
        let leaked = lines.filter {
            $0.hasPrefix("NOTIFY_SOCKET=") || $0.hasPrefix("WATCHDOG_") || $0.hasPrefix("LISTEN_")
        }
        #expect(leaked.isEmpty)
    }

    @Test func runnerStripsReservedNamesFromAnyEnvironment() async throws {
        var spec = ProcessSpec.argv("/usr/bin/env")
        spec.environment = ["PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": "@x", "LISTEN_FDS": "3", "KEEP": "yes"]
        let lines = String(decoding: try await output(of: spec), as: UTF8.self).split(separator: "\n")
        #expect(lines.sorted() == ["KEEP=yes", "PATH=/usr/bin:/bin"])
    }

    @Test func onlyStandardDescriptorsReachTheChild() async throws {
        // A descriptor this process opened without O_CLOEXEC still must
        // not leak (the spawn closes everything from 3 up).
        let leaky = open("/dev/null", O_RDONLY)
        #expect(leaky > 2)
        defer { close(leaky) }
        let out = try await output(of: .shell("ls /proc/$$/fd"))
        let descriptors = String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        #expect(descriptors.sorted() == [0, 1, 2])
    }

    @Test func childHasItsOwnProcessGroupAndDefaultSignals() async throws {
        // Read by the spawned program itself (a shell would show its own
        // mask: dash blocks every signal while it waits for a child).
        let stat = String(
            decoding: try await output(of: .argv("cut", "-d", " ", "-f1,5", "/proc/self/stat")), as: UTF8.self)
        let ids = stat.split(whereSeparator: { $0 == " " || $0 == "\n" })
        #expect(ids.count == 2 && ids[0] == ids[1])  // pgid == pid: a group of its own

        signal(SIGTERM, SIG_IGN)  // ignored here must not mean ignored there
        defer { signal(SIGTERM, SIG_DFL) }
        let status = String(
            decoding: try await output(of: .argv("grep", "-E", "^(SigIgn|SigBlk)", "/proc/self/status")), as: UTF8.self)
        // The spawning thread (a Dispatch worker) blocks most signals.
        #expect(status.contains("SigBlk:\t0000000000000000"))
        // Standard signals 1…31 all at their defaults (glibc leaves its own
        // internal real-time signals 32 and 33 ignored).
        let ignored = status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
        let mask = UInt64(ignored?.split(separator: "\t").last ?? "", radix: 16)
        #expect(mask.map { $0 & 0x7fff_ffff } == 0)
    }
}
