import Foundation
import TestSupport
import Testing

@testable import JobConfig

#if canImport(Glibc)
import Glibc
#endif

/// Config and definition files written to break jobd: each case
/// is refused when it is read, with a message that says what is wrong and
/// where, and quotes no more of the file than it needs.
@Suite struct HostileConfigTests {
    let path = "/etc/jobd/jobd.yaml"

    func definitionDiagnostics(_ yaml: String) throws -> [Diagnostic] {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return DefinitionLoader().parse(yaml: yaml, path: folder + "/job.yaml").diagnostics
    }

    // MARK: 1. Durations past ten years

    @Test(arguments: ["9223372036854775s", "9223372036854775807ms", "3651d"])
    func aTimeoutPastTenYearsIsRefusedWhenRead(timeout: String) throws {
        let d = try definitionDiagnostics("timeout: \(timeout)\npipeline:\n  - then: a\n    run: [true]\n")
        expectDiagnostic(d, .badDuration, line: 1, contains: "at most 3650d")
    }

    // MARK: 2, 7. Sizes and counts with upper bounds

    @Test func aValueCapPastWhatTheStoreHoldsIsRefused() {
        let d = DaemonConfiguration.parse(yaml: "store: { value-cap: 3GiB }\n", path: path).diagnostics
        expectDiagnostic(d, .invalidValue, line: 1, contains: "at most 512MiB")
        #expect(DaemonConfiguration.parse(yaml: "store: { value-cap: 512MiB }\n", path: path).value != nil)
    }

    @Test(arguments: [
        ("Q: { map: { concurrency: 10000000 } }\n", "between 1 and 1024"),
        ("pools: { default: 100000000 }\n", "between 1 and 10000"),
        ("Q: { map: { concurrency: 99999999999999999999999 } }\n", "must be an integer"),
    ])
    func countsHaveAnUpperBound(yaml: String, message: String) {
        let result = DaemonConfiguration.parse(yaml: yaml, path: path)
        #expect(result.value == nil)
        #expect(
            result.diagnostics.contains { $0.position.line == 1 && $0.message.contains(message) },
            "\(result.diagnostics)")
    }

    @Test func theNumberOfQueuesAndPoolsIsBounded() {
        let queues = (0...DaemonConfiguration.maxQueues).map { "  q\($0): { concurrency: 1 }" }.joined(separator: "\n")
        let d = DaemonConfiguration.parse(yaml: "Q:\n\(queues)\n", path: path).diagnostics
        expectDiagnostic(d, .invalidValue, line: 2, contains: "at most \(DaemonConfiguration.maxQueues)")
        let pools = (0...DaemonConfiguration.maxPools).map { "  p\($0): 1" }.joined(separator: "\n")
        let p = DaemonConfiguration.parse(yaml: "pools:\n\(pools)\n", path: path).diagnostics
        expectDiagnostic(p, .invalidValue, line: 2, contains: "at most \(DaemonConfiguration.maxPools)")
    }

    @Test func retryAttemptsAreBounded() throws {
        let d = try definitionDiagnostics("retry: { attempts: 100000000 }\npipeline:\n  - then: a\n    run: [true]\n")
        expectDiagnostic(d, .invalidValue, line: 1, contains: "between 1 and 1000")
    }

    // MARK: 9. What is read and quoted

    @Test func aSymlinkOutOfTheConfigFolderIsNotFollowed() throws {
        let root = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let secret = try makeTemporaryFolder() + "/secret"
        try write("root:$6$saltsaltsalt$hashhashhashhashhashhashhash:19000:0:99999:7:::\n", to: secret)
        try FileManager.default.createDirectory(atPath: root + "/jobs.d", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/jobs.d/shadow.yaml", withDestinationPath: secret)
        try write("pipeline:\n  - then: a\n    run: [true]\n", to: root + "/shared.yaml")
        try FileManager.default.createSymbolicLink(
            atPath: root + "/jobs.d/inside.yaml", withDestinationPath: "../shared.yaml")

        let set = DefinitionLoader().loadFolder(root + "/jobs.d")
        #expect(set.names == ["inside"])
        let problem = try #require(set.diagnostics.first { $0.position.path.hasSuffix("shadow.yaml") })
        #expect(problem.message.contains("outside"))
        #expect(!problem.message.contains("hash"), "\(problem)")
    }

    @Test func aFileThatIsNotADefinitionIsQuotedShortAndEscaped() throws {
        let d = try definitionDiagnostics("root:$6$saltsaltsalt$hashhashhashhashhashhashhash:19000:0:99999:7:::\n")
        let message = try #require(d.first?.message)
        // At most 32 characters of the line, then an ellipsis.
        #expect(message.contains("'root:$6$saltsaltsalt$hashhashhas…'"), "\(message)")
        #expect(!message.contains("19000"), "\(message)")
        let d2 = try definitionDiagnostics("name: \"a\u{202E}b\u{9B}c\"\npipeline: []\n")
        #expect(d2.allSatisfy { !$0.message.unicodeScalars.contains { TerminalSafe.isUnsafe($0) } }, "\(d2)")
    }

    // MARK: 10. Clear errors

    @Test func aBrokenSymlinkIsAnErrorNotSkipped() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/gone.yaml", withDestinationPath: folder + "/missing.yaml")
        let set = DefinitionLoader().loadFolder(folder)
        #expect(
            set.diagnostics.map(\.message) == [
                "is a broken symlink to \(folder)/missing.yaml; remove it or fix its target"
            ])
        #expect(set.diagnostics.first?.severity == .error)
    }

    @Test func aSymlinkLoopIsCalledALoop() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/a.yaml", withDestinationPath: folder + "/b.yaml")
        try FileManager.default.createSymbolicLink(atPath: folder + "/b.yaml", withDestinationPath: folder + "/a.yaml")
        let set = DefinitionLoader().loadFolder(folder)
        #expect(
            set.diagnostics.map(\.message) == [
                "is a symlink loop (it points to \(folder)/b.yaml, which leads back to it); remove it or point it at a file",
                "is a symlink loop (it points to \(folder)/a.yaml, which leads back to it); remove it or point it at a file",
            ])
    }

    @Test func aFIFOOrADeviceIsRefusedWithoutReading() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(folder + "/pipe.yaml", 0o600) == 0)
        let set = DefinitionLoader().loadFolder(folder)
        #expect(set.diagnostics.map(\.message) == ["the file is a FIFO, not a regular file"])
        let null = DefinitionLoader().loadFiles(["/dev/null"])
        #expect(null.diagnostics.map(\.message) == ["the file is a character device, not a regular file"])
    }

    @Test func aConfigFileOverOneMiBIsRefused() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(String(repeating: "# padding\n", count: 110_000), to: folder + "/jobd.yaml")
        let result = DaemonConfiguration.load(path: folder + "/jobd.yaml")
        #expect(
            result.diagnostics.map(\.message) == [
                "the file is 1100000 bytes, larger than any config file jobd reads (1048576 bytes)"
            ])
    }

    @Test func nonUTF8TextIsReportedAtItsLineAndColumn() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var bytes = Array("pipeline:\n  - then: né".utf8)
        bytes += [0xFF, 0x0A]
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/bad.yaml"))
        let set = DefinitionLoader().loadFiles([folder + "/bad.yaml"])
        let problem = try #require(set.diagnostics.first)
        #expect(problem.position.line == 2 && problem.position.column == 13, "\(problem)")
        #expect(problem.message.contains("byte 23 (0xFF) is not valid UTF-8"), "\(problem)")
    }

    @Test func deepNestingSaysSoInJobdsWords() throws {
        let d = try definitionDiagnostics(String(repeating: "[", count: 1200))
        let message = try #require(d.first?.message)
        #expect(message.contains("nested too deeply"), "\(message)")
        #expect(!message.contains("yaml_set_max_nest_level"))
    }

    @Test func aDuplicateKeyIsReportedWhereItIsRepeated() {
        let yaml = "database: a.sqlite\nlog: { level: info }\ndatabase: b.sqlite\n"
        let d = DaemonConfiguration.parse(yaml: yaml, path: path).diagnostics
        #expect(d.count == 1)
        #expect(d.first?.position.line == 3, "\(d)")
        #expect(d.first?.message == "duplicate key 'database' (first at line 1): a key may appear once in a mapping")
    }

    @Test func anErrorInJobdYamlAddsNoFalseMissingFolder() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/defs", withIntermediateDirectories: true)
        try write("pipeline:\n  - then: a\n    run: [true]\n", to: folder + "/defs/a.yaml")
        try write("definitions: defs\npools: { default: 0 }\n", to: folder + "/jobd.yaml")
        let result = Configuration.load(at: ConfigLocator.Location(path: folder + "/jobd.yaml", reason: .commandLine))
        #expect(result.diagnostics.map(\.code) == [.invalidValue], "\(result.diagnostics)")
        // And with `definitions` itself wrong, the folder it would name is not guessed at.
        try write("definitions: [x]\n", to: folder + "/jobd.yaml")
        let other = Configuration.load(at: ConfigLocator.Location(path: folder + "/jobd.yaml", reason: .commandLine))
        #expect(other.diagnostics.map(\.code) == [.wrongType], "\(other.diagnostics)")
    }

    @Test func aConfigPathThatIsAFolderOrEmptySaysSo() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect {
            try ConfigLocator.locate(explicitPath: folder, environment: [:], currentDirectory: "/")
        } throws: { error in
            (error as? ConfigLocatorError)?.message
                == "the config file \(folder) given with --config is a folder, not a file"
        }
        #expect {
            try ConfigLocator.locate(explicitPath: "", environment: [:], currentDirectory: folder)
        } throws: { error in
            (error as? ConfigLocatorError)?.message == "--config is empty; give the path of jobd.yaml"
        }
    }

    // MARK: 11. Examples

    /// An example must not probe someone else's server: the hosts it names
    /// are reserved for documentation (RFC 2606) or local.
    @Test func examplesNameNoThirdPartyHost() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/config/jobs.d/net-check.yaml", encoding: .utf8)
        let host = try #require(text.split(separator: "\n").first { $0.hasPrefix("  CHECK_HOST:") })
            .split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
        let reserved = ["example.org", "example.com", "example.net", "localhost", "127.0.0.1"]
        #expect(reserved.contains(host ?? ""), "net-check probes \(host ?? "?")")
    }
}
