import Foundation
import JobConfig
import JobControl
import JobDaemon
import JobStore
import JobStoreSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// jobd attacked from outside: its control socket held by slow
/// clients, its database removed or damaged under it.
@Suite struct HostileDaemonTests {
    static let echo = "pipeline:\n  - then: echo\n    run: [cat]\n"

    /// A connection to `path` that has sent `bytes` and then says nothing.
    func connect(_ path: String, sending bytes: [UInt8] = []) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard let address = UnixSocketAddress(path: path),
            address.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0
        else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        if !bytes.isEmpty { _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// The reply line jobd wrote on `fd` (it closes the connection after it).
    func reply(on fd: Int32) throws -> ControlReply {
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }  // a signal, with a receive timeout set
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return try ControlCoding.decodeLine(ControlReply.self, from: Data(data.prefix { $0 != UInt8(ascii: "\n") }))
    }

    func threads(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return Int(line?.split(separator: "\t").last ?? "") ?? -1
    }

    /// 100 clients each sending a byte every half second for four seconds:
    /// each gets an error reply once the request deadline (2 s for the whole
    /// request, not for each read) has passed — or at once, past the
    /// connection limit — jobd spends no thread on them, and it answers
    /// again as soon as they are gone.
    @Test func slowClientsCannotHoldTheControlSocket() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let before = threads(of: harness.pid)
        let slow = try (0..<100).map { _ in try connect(harness.socketPath, sending: [UInt8(ascii: "{")]) }
        defer { slow.forEach { close($0) } }
        // Awaited before the descriptors are closed: a send after a close
        // could reach another test's descriptor of the same number.
        let dribbling = Task {
            for _ in 0..<8 {
                try? await Task.sleep(for: .milliseconds(500))
                for fd in slow { _ = send(fd, " ", 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(
            threads(of: harness.pid) <= before + 4,
            "threads: \(before) before, \(threads(of: harness.pid)) with 100 idle clients")
        var reasons: [String] = []
        for fd in slow { reasons.append(try reply(on: fd).error ?? "") }
        await dribbling.value
        #expect(reasons.filter { $0.contains("did not arrive whole within 2") }.count == ControlServer.maxConnections)
        #expect(
            reasons.filter { $0.contains("serving \(ControlServer.maxConnections) control connections") }.count
                == 100 - ControlServer.maxConnections)
        let status = try ControlClient.send(ControlRequest(.status), to: harness.socketPath)
        #expect(status.status?.pid == harness.pid)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }

    @Test func aRequestOverTheSizeLimitGetsAnErrorReply() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let fd = try connect(harness.socketPath)
        defer { close(fd) }
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: ControlCoding.maximumLine + 10)
        var sent = 0
        while sent < big.count {
            let count = big[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
        }
        let answer = try reply(on: fd)
        #expect(!answer.ok && answer.error?.contains("over \(ControlCoding.maximumLine) bytes") == true, "\(answer)")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }

    /// The database (or its write-ahead log) removed under a running jobd:
    /// it stops with an error within seconds instead of writing to a file
    /// no other process sees.
    @Test(arguments: ["", "-wal"])
    func aDatabaseFileRemovedStopsJobd(suffix: String) async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        let id = try await harness.submit("echo", input: "x", to: store)
        #expect(try await harness.resolved(id, in: store).job.state == .fulfilled)
        try await store.close()
        #expect(unlink(harness.databasePath + suffix) == 0)
        #expect(await harness.exitStatus(within: .seconds(10)) == JobdExit.ioError, "\(harness.log)")
        #expect(
            harness.log.contains(suffix.isEmpty ? "was removed while this process had it open" : "write-ahead log"),
            "\(harness.log)")
    }

    @Test func aDamagedDatabaseIsRefusedAtStart() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try FileManager.default.createDirectory(atPath: harness.folder + "/state", withIntermediateDirectories: true)
        let store = try harness.openStore()
        for _ in 0..<100 {
            try await harness.submit("echo", input: String(repeating: "y", count: 300), to: store, nudge: false)
        }
        try await store.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: harness.databasePath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: Int(size) - 4096))
        try handle.close()
        try harness.start()
        #expect(await harness.exitStatus() == JobdExit.cantCreate)
        #expect(
            harness.log.contains("is damaged") || harness.log.contains("is not a jobd database or is damaged"),
            "\(harness.log)")
    }

    /// Outside systemd too, the database and its folder are for the owner
    /// and group only.
    @Test func theDatabaseAndItsFolderAreNotWorldReadable() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        let old = umask(0o022)
        try harness.start()
        umask(old)
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let mode = { (path: String) in
            (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        }
        #expect(mode(harness.folder + "/state") == 0o770)
        #expect(mode(harness.databasePath) == 0o660)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }
}
