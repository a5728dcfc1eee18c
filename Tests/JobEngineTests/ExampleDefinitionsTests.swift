import Foundation
import JobConfig
import JobStore
import JobStoreSQLite
import Spawn
import TestSupport
import Testing

@testable import JobEngine

/// The configuration files shipped in `config/` load cleanly, and the example
/// definitions that need no network do what their comments say when run by
/// the engine (in temporary folders instead of /etc/jobd and /var/lib/jobd).
@Suite struct ExampleDefinitionsTests {
    static let examples = repositoryRoot + "/config/jobs.d"

    /// The text of an example definition.
    func example(_ name: String) throws -> String {
        try String(contentsOfFile: Self.examples + "/" + name + ".yaml", encoding: .utf8)
    }

    /// `text` with `old` replaced, failing the test if `old` is not there
    /// (so an edited example cannot turn a check into one that passes idly).
    func replacing(
        _ old: String, with new: String, in text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        #expect(text.contains(old), "the example no longer contains \(old)", sourceLocation: sourceLocation)
        return text.replacingOccurrences(of: old, with: new)
    }

    @Test func developmentConfigurationLoadsWithoutDiagnostics() throws {
        let location = ConfigLocator.Location(path: repositoryRoot + "/config/jobd.yaml", reason: .commandLine)
        let result = Configuration.load(at: location)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.description))")
        let configuration = try result.get()
        #expect(
            configuration.definitions.names == [
                "backup-config", "disk-check", "fallback", "hello", "net-check", "system-facts",
            ])
    }

    @Test func productionConfigurationLoadsWithoutDiagnostics() throws {
        let path = repositoryRoot + "/config/jobd.production.yaml"
        let location = ConfigLocator.Location(path: path, reason: .commandLine)
        let result = Configuration.load(at: location)
        let config = try DaemonConfiguration.load(path: path).get()
        #expect(config.database == "/var/lib/jobd/jobd.sqlite")
        #expect(config.socket == "/run/jobd/jobd.sock")
        #expect(config.definitions == "/etc/jobd/jobs.d")
        #expect(config.shutdownGrace == .seconds(30))
        if FileManager.default.fileExists(atPath: config.definitions) {
            // An installed machine: whatever is in /etc/jobd/jobs.d must load.
            #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.description))")
        } else {
            // No /etc/jobd here: that folder is the only problem.
            #expect(result.diagnostics.map(\.code) == [.missingFolder], "\(result.diagnostics.map(\.description))")
        }
        // `make install` puts the examples in that folder: they must load
        // against the production file's queues and pools too.
        let set = DefinitionLoader(config: config).loadFolder(Self.examples)
        #expect(set.diagnostics.isEmpty, "\(set.diagnostics.map(\.description))")
        #expect(set.names.count == 6)
    }

    @Test func backupArchivesVerifiesPublishesPrunesAndCleansUp() async throws {
        let scratch = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let source = scratch + "/etc-jobd"
        let backups = scratch + "/backups"
        try FileManager.default.createDirectory(atPath: source + "/jobs.d", withIntermediateDirectories: true)
        try write("database: x\n", to: source + "/jobd.yaml")
        try write("pipeline: []\n", to: source + "/jobs.d/a.yaml")
        var text = try example("backup-config")
        text = replacing("BACKUP_SOURCE: /etc/jobd", with: "BACKUP_SOURCE: \(source)", in: text)
        text = replacing("BACKUP_DIR: /var/lib/jobd/backups", with: "BACKUP_DIR: \(backups)", in: text)
        text = replacing("BACKUP_KEEP: \"7\"", with: "BACKUP_KEEP: \"2\"", in: text)
        let harness = try EngineHarness([text])
        let name = try #require(harness.definitions.keys.first)

        var published: [String] = []
        for _ in 0..<3 {
            let id = try await harness.submit(name)
            let detail = try await harness.resolved(id)
            #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
            let path = try #require(detail.resultText)
            #expect(path.hasPrefix(backups + "/jobd-config-") && path.hasSuffix("-\(id).tar.gz"), "\(path)")
            #expect(detail.stage("cleanup")?.state == .fulfilled)
            published.append(path)
            // One second apart: archive names carry the time to the second.
            try await Task.sleep(for: .milliseconds(1100))
        }

        // The archive holds the folder, under its own name.
        let listing = try runTool("/usr/bin/tar", ["-tzf", published[2]])
        #expect(listing.contains("etc-jobd/jobd.yaml") && listing.contains("etc-jobd/jobs.d/a.yaml"), "\(listing)")
        // The newest two are kept, no temporary file is left.
        let left = try FileManager.default.contentsOfDirectory(atPath: backups).sorted()
        #expect(left == published.suffix(2).map { URL(fileURLWithPath: $0).lastPathComponent }.sorted(), "\(left)")
    }

    @Test func backupThatFailsIsRetriedAndLeavesNoPartialFile() async throws {
        let scratch = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let backups = scratch + "/backups"
        var text = try example("backup-config")
        text = replacing("BACKUP_SOURCE: /etc/jobd", with: "BACKUP_SOURCE: \(scratch)/missing", in: text)
        text = replacing("BACKUP_DIR: /var/lib/jobd/backups", with: "BACKUP_DIR: \(backups)", in: text)
        text = replacing("backoff: 5s, max-backoff: 1m", with: "backoff: 10ms, max-backoff: 20ms", in: text)
        let harness = try EngineHarness([text])
        let name = try #require(harness.definitions.keys.first)
        let id = try await harness.submit(name)
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .rejected)
        #expect(detail.stage("archive")?.state == .rejected)
        #expect(detail.stage("archive")?.attempts == 3)
        #expect(detail.stage("publish")?.state == .skipped)
        #expect(detail.stage("cleanup")?.state == .fulfilled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: backups) == [])
    }

    @Test func diskCheckFansOutAndRejectsAboveTheLimit() async throws {
        let text = try example("disk-check")
        let roomy = try EngineHarness([replacing("DISK_LIMIT: \"90\"", with: "DISK_LIMIT: \"100\"", in: text)])
        let fits = try await roomy.resolved(try await roomy.submit(try #require(roomy.definitions.keys.first)))
        #expect(fits.job.state == .fulfilled, "\(fits.job.error ?? "")")
        let usage = try JSONDecoder().decode([String].self, from: try #require(fits.job.result))
        #expect(usage.count == 3)
        #expect(usage.first?.hasPrefix("/ ") == true && usage.allSatisfy { $0.hasSuffix("%") }, "\(usage)")

        let strict = try EngineHarness([replacing("DISK_LIMIT: \"90\"", with: "DISK_LIMIT: \"-1\"", in: text)])
        let name = try #require(strict.definitions.keys.first)
        let full = try await strict.resolved(try await strict.submit(name))
        #expect(full.job.state == .rejected)
        #expect(full.job.error?.contains("% full (limit -1%)") == true, "\(full.job.error ?? "")")
        #expect(full.stage("warn")?.state != .skipped, "catch runs on the rejection")
    }

    @Test func helloGreets() async throws {
        let harness = try EngineHarness([try example("hello")])
        let name = try #require(harness.definitions.keys.first)
        let detail = try await harness.resolved(try await harness.submit(name, input: "world"))
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText == "HELLO, WORLD!")
    }

    @Test func systemFactsGathersThreeProbes() async throws {
        let harness = try EngineHarness([try example("system-facts")])
        let detail = try await harness.resolved(try await harness.submit("system-facts"))
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText?.hasPrefix("Linux ") == true, "\(detail.resultText ?? "")")
        let gathered = try JSONDecoder().decode([String].self, from: try #require(detail.stage("gather")?.value))
        #expect(gathered.count == 3)
    }

    @Test func fallbackRecoversThenFailsItsCheck() async throws {
        let harness = try EngineHarness([try example("fallback")])
        let name = try #require(harness.definitions.keys.first)
        let detail = try await harness.resolved(try await harness.submit(name))
        #expect(detail.job.state == .rejected)
        #expect(detail.job.error?.contains("status is degraded, not ok") == true, "\(detail.job.error ?? "")")
        #expect(detail.stage("fetch")?.attempts == 2)
        #expect(
            detail.states == [
                "fetch": .rejected, "fallback": .fulfilled, "status": .fulfilled,
                "check": .rejected, "report": .fulfilled, "cleanup": .fulfilled,
            ])
    }
}

/// Runs a tool to its end and returns its standard output.
private func runTool(_ path: String, _ arguments: [String]) throws -> String {
    try SpawnedProcess(path, arguments, stdout: .capture, stderr: .inherit).finish().stdoutText
}
