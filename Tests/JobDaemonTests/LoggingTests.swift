import Foundation
import JobConfig
import JobControl
import Logging
import Testing

@testable import JobDaemon

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LogOutputTests {
    @Test func journalLinesCarryThePriorityAndNoTimestamp() {
        let output = LogOutput(format: .journal, level: .info)
        #expect(
            output.line(level: .warning, message: "disk full", metadata: ["job": "7", "stage": "2"])
                == "<4>disk full job=7 stage=2\n")
        #expect(output.line(level: .critical, message: "x", metadata: [:]) == "<2>x\n")
        #expect(output.line(level: .debug, message: "x", metadata: [:]) == "<7>x\n")
        #expect(output.line(level: .info, message: "x", metadata: [:]) == "<6>x\n")
        #expect(output.line(level: .error, message: "two\nlines", metadata: [:]) == "<3>two\\nlines\n")
    }

    @Test func plainLinesCarryATimestampAndTheLevel() {
        let output = LogOutput(format: .plain, level: .info)
        let date = Date(timeIntervalSince1970: 1_795_000_000.25)
        #expect(
            output.line(level: .notice, message: "ready", metadata: ["job": "1"], now: date)
                == "2026-11-18T11:06:40.250Z notice ready job=1\n")
    }

    @Test func journaldIsDetectedOnlyWhenStderrIsItsStream() throws {
        let path = NSTemporaryDirectory() + "jobd-log-" + UUID().uuidString
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        defer { unlink(path) }
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        var status = stat()
        #expect(fstat(fd, &status) == 0)
        let matching = "\(status.st_dev):\(status.st_ino)"
        #expect(LogOutput.detectFormat(environment: ["JOURNAL_STREAM": matching], fd: fd) == .journal)
        #expect(
            LogOutput.detectFormat(environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino + 1)"], fd: fd)
                == .plain)
        #expect(LogOutput.detectFormat(environment: [:], fd: fd) == .plain)
        #expect(LogOutput.detectFormat(environment: ["JOURNAL_STREAM": "garbage"], fd: fd) == .plain)
    }

    @Test func jobdUnderJournaldWritesPriorities() async throws {
        let harness = try DaemonHarness(definitions: [:])
        // Point JOURNAL_STREAM at the file jobd's stderr goes to.
        _ = FileManager.default.createFile(atPath: harness.folder + "/jobd-1.log", contents: nil)
        var status = stat()
        #expect(stat(harness.folder + "/jobd-1.log", &status) == 0)
        try harness.start(environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino)"])
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        let lines = harness.log.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>jobd \(JobdVersion.string) ready") })
        #expect(lines.contains { $0.hasPrefix("<5>SIGTERM: stopping") })
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(lines)")
    }
}

@Suite struct LeaseOwnerTests {
    @Test func ownerNamesCarryTheNodeFirst() {
        let owner = LeaseOwner(node: "web-1.example", pid: 4242, tag: "9fa3")
        #expect(owner.description == "web-1.example/4242/9fa3")
        #expect(LeaseOwner(parsing: "web-1.example/4242/9fa3") == owner)
        #expect(LeaseOwner.node(of: "web-1.example/4242/9fa3") == "web-1.example")
        #expect(LeaseOwner(parsing: "/1/x") == nil)
        #expect(LeaseOwner(parsing: "h/notapid/x") == nil)
        #expect(LeaseOwner.node(of: "engine-1") == "engine-1", "another shape: the name itself")
    }

    @Test func theFormBeforeNodesIsParsedFromTheEnd() {
        #expect(
            LeaseOwner(parsing: "jobd-web-1.example-4242-9fa3")
                == LeaseOwner(node: "web-1.example", pid: 4242, tag: "9fa3"))
        #expect(LeaseOwner(parsing: "jobd-h-1-x") == LeaseOwner(node: "h", pid: 1, tag: "x"))
        #expect(LeaseOwner(parsing: "worker-h-1-x") == nil)
        #expect(LeaseOwner(parsing: "jobd-h-notapid-x") == nil)
        #expect(LeaseOwner(parsing: "jobd-") == nil)
    }

    @Test func onlyGoneProcessesOfThisNodeAreDead() {
        // A pid above the kernel's limit cannot exist.
        #expect(LeaseOwner.isDeadLocalProcess("here/99999999/a", node: "here", ownPid: 1))
        #expect(LeaseOwner.isDeadLocalProcess("jobd-here-99999999-a", node: "here", ownPid: 1), "the older form")
        #expect(!LeaseOwner.isDeadLocalProcess("there/99999999/a", node: "here", ownPid: 1), "another node: in doubt")
        #expect(!LeaseOwner.isDeadLocalProcess("here/\(getpid())/a", node: "here", ownPid: 1), "alive")
        #expect(!LeaseOwner.isDeadLocalProcess("here/5/a", node: "here", ownPid: 5), "itself")
    }
}

@Suite struct WatchdogSettingTests {
    @Test func halfOfWatchdogUsecForThisProcessOnly() {
        #expect(
            SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "3000000"], pid: 10) == .milliseconds(1500))
        #expect(
            SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "10"], pid: 10)
                == .milliseconds(1500))
        #expect(
            SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "11"], pid: 10)
                == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "0"], pid: 10) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: [:], pid: 10) == nil)
    }
}
