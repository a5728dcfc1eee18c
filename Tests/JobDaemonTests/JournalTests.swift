import Foundation
import JobEngine
import JobProcesses
import TestSupport
import Testing

@testable import JobDaemon

#if canImport(Glibc)
import Glibc
#endif

/// Stage log lines as journal entries, read from a datagram socket the test
/// binds where journald's would be.
@Suite struct JournalTests {
    /// A bound unix datagram socket and what arrives on it.
    final class FakeJournal: Sendable {
        let path: String
        let fd: Int32

        init(folder: String) throws {
            path = folder + "/journal.socket"
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0)
        }

        deinit { close(fd) }

        /// Every datagram waiting, each as its fields.
        func entries() -> [[String: [UInt8]]] {
            var result: [[String: [UInt8]]] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 17)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { return result }
                result.append(Self.parse(Array(buffer[..<count])))
            }
        }

        /// The native protocol, read back: `NAME=value\n`, or `NAME\n` + 64-bit LE length + value + `\n`.
        static func parse(_ bytes: [UInt8]) -> [String: [UInt8]] {
            var fields: [String: [UInt8]] = [:]
            var index = 0
            while index < bytes.count {
                let nameEnd = bytes[index...].firstIndex { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }!
                let name = String(decoding: bytes[index..<nameEnd], as: UTF8.self)
                if bytes[nameEnd] == UInt8(ascii: "=") {
                    let end = bytes[(nameEnd + 1)...].firstIndex(of: UInt8(ascii: "\n"))!
                    fields[name] = Array(bytes[(nameEnd + 1)..<end])
                    index = end + 1
                } else {
                    var length: UInt64 = 0
                    for (shift, byte) in bytes[(nameEnd + 1)..<(nameEnd + 9)].enumerated() {
                        length |= UInt64(byte) << (8 * UInt64(shift))
                    }
                    let start = nameEnd + 9
                    fields[name] = Array(bytes[start..<(start + Int(length))])
                    index = start + Int(length) + 1
                }
            }
            return fields
        }
    }

    let source = StageLogSource(jobID: 42, definition: "report", stage: "fetch", position: 0, attempt: 2)

    private func lines(_ texts: [[UInt8]]) -> [OutputLine] {
        texts.map { OutputLine(at: Date(), bytes: $0) }
    }

    @Test func eachLineIsAnEntryWithTheJobsFieldsAndItsPriority() async throws {
        let folder = try TemporaryFolder()
        let fake = try FakeJournal(folder: folder.path)
        let journal = try #require(Journal(path: fake.path))
        let log = JournalStageLog(journal: journal, source: source)
        log.receive(lines([Array("<3>disk full".utf8), Array("plain".utf8), [0x61, 0xFF, 0x0A, 0x62]]))
        log.close()
        let entries = fake.entries()
        #expect(entries.count == 3)
        #expect(entries.map { String(decoding: $0["JOBD_JOB_ID"] ?? [], as: UTF8.self) } == ["42", "42", "42"])
        #expect(entries[0]["JOBD_STAGE"] == Array("fetch".utf8))
        #expect(entries[0]["JOBD_ATTEMPT"] == Array("2".utf8))
        #expect(entries[0]["JOBD_DEFINITION"] == Array("report".utf8))
        #expect(entries[0]["PRIORITY"] == Array("3".utf8))
        #expect(entries[0]["MESSAGE"] == Array("disk full".utf8))
        #expect(entries[1]["PRIORITY"] == Array("6".utf8))
        #expect(entries[1]["MESSAGE"] == Array("plain".utf8))
        // A value with a newline goes length-prefixed, its bytes as they are.
        #expect(entries[2]["MESSAGE"] == [0x61, 0xFF, 0x0A, 0x62])
    }

    @Test func aChattyStageIsCutAndTheCutIsSaid() async throws {
        let folder = try TemporaryFolder()
        let fake = try FakeJournal(folder: folder.path)
        let journal = try #require(Journal(path: fake.path))
        let log = JournalStageLog(journal: journal, source: source, burst: 5, interval: .seconds(3600))
        log.receive(lines((0..<12).map { Array("line \($0)".utf8) }))
        log.close()
        let messages = fake.entries().map { String(decoding: $0["MESSAGE"] ?? [], as: UTF8.self) }
        #expect(Array(messages.prefix(5)) == (0..<5).map { "line \($0)" })
        #expect(messages.count == 6)
        #expect(
            messages.last?.hasPrefix("jobd: 7 lines of this stage were not sent to the journal (over 5 per 3600 s)")
                == true)
    }
}
