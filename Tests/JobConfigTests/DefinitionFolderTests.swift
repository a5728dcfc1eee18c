import Foundation
import JobConfig
import TestSupport
import Testing

@Suite struct DefinitionFolderTests {
    @Test func loadsEveryFileAndReportsEveryProblemInFileOrder() throws {
        let folder = try makeTemporaryFolder()
        try write("pipeline:\n  - then: a\n    run: [echo, a]\n", to: folder + "/alpha.yaml")
        try write("name: alpha\npipeline:\n  - then: b\n    run: [echo, b]\n", to: folder + "/beta.yaml")
        try write("pipeline:\n  - then: c\n    transform: trim\n  - map: d\n    run: [x]\n", to: folder + "/gamma.yml")
        try write("pipeline: [\n", to: folder + "/broken.yaml")
        try write("pipeline:\n  - then: z\n    run: [z]\n", to: folder + "/zeta.yaml")
        try write("not: loaded\n", to: folder + "/.hidden.yaml")
        try write("not: loaded\n", to: folder + "/notes.txt")
        try FileManager.default.createDirectory(atPath: folder + "/sub.yaml", withIntermediateDirectories: false)

        let set = DefinitionLoader(context: .defaults).loadFolder(folder)
        #expect(set.names == ["alpha", "zeta"])
        #expect(set["alpha"]?.stages.first?.action == .run(["echo", "a"]))
        #expect(set["beta"] == nil)

        let d = set.diagnostics
        #expect(
            d.map(\.position.path) == [
                folder + "/beta.yaml", folder + "/broken.yaml",
                folder + "/gamma.yml", folder + "/gamma.yml", folder + "/sub.yaml",
            ])
        #expect(d[0].code == .duplicateJobName)
        #expect(d[0].position.line == 1)
        #expect(d[0].message.contains("\(folder)/alpha.yaml:1:1 declares it already"))
        #expect(d[1].code == .yamlSyntax)
        #expect(d[2].code == .actionNotAllowed && d[2].position.line == 3)
        #expect(d[3].code == .actionNotAllowed && d[3].position.line == 5)
        // A folder named like a definition is not loaded, and said so.
        #expect(d[4].severity == .warning && d[4].message.contains("a folder named like a definition file"))

        // The same folder loads the same way every time.
        let again = DefinitionLoader(context: .defaults).loadFolder(folder)
        #expect(again.diagnostics == set.diagnostics)
        #expect(again.definitions == set.definitions)
    }

    @Test func queuesAndPoolsComeFromTheConfig() throws {
        let config = try DaemonConfiguration.parse(
            yaml: "Q: { io: { concurrency: 2 } }\npools: { nightly: 1 }\n",
            path: "/etc/jobd/jobd.yaml"
        ).get()
        let loader = DefinitionLoader(config: config)
        let ok = loader.parse(
            yaml: "pool: nightly\npipeline:\n  - then: a\n    run: [x]\n    on: io\n", path: "/d/ok.yaml")
        #expect(ok.diagnostics.isEmpty)
        #expect(ok.value?.stages.first?.queue == "io")
        let bad = DefinitionLoader(context: .defaults)
            .parse(yaml: "pool: nightly\npipeline:\n  - then: a\n    run: [x]\n    on: io\n", path: "/d/ok.yaml")
        #expect(bad.diagnostics.map(\.code) == [.unknownPool, .unknownQueue])
    }

    @Test func missingFolderIsOneDiagnostic() {
        let set = DefinitionLoader().loadFolder("/nonexistent/jobd/jobs.d")
        #expect(set.definitions.isEmpty)
        #expect(set.diagnostics.map(\.code) == [.missingFolder])
        #expect(set.diagnostics.first?.description.hasPrefix("/nonexistent/jobd/jobs.d: error: ") == true)
    }

    @Test func nonUTF8FileIsReported() throws {
        let folder = try makeTemporaryFolder()
        try Data([0x70, 0x3A, 0xFF, 0xFE, 0x0A]).write(to: URL(fileURLWithPath: folder + "/bin.yaml"))
        let set = DefinitionLoader().loadFolder(folder)
        #expect(set.diagnostics.map(\.code) == [.unreadableFile])
    }
}

@Suite struct RepositoryConfigTests {
    @Test func developmentConfigAndDefinitionsHaveNoProblems() throws {
        let path = repositoryRoot + "/config/jobd.yaml"
        let result = DaemonConfiguration.load(path: path)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.description))")
        let config = try result.get()
        #expect(config.database == repositoryRoot + "/var/jobd.sqlite")
        #expect(config.socket == repositoryRoot + "/var/jobd.sock")
        #expect(config.definitions == repositoryRoot + "/config/jobs.d")
        #expect(config.queues == ["map": .init(concurrency: 4), "return": .init(concurrency: 1)])
        #expect(config.pools == ["default": 16])
        #expect(config.log.level == .info)

        let set = DefinitionLoader(config: config).loadFolder(config.definitions)
        #expect(set.diagnostics.isEmpty, "\(set.diagnostics.map(\.description))")
        #expect(set.names == ["backup-config", "disk-check", "fallback", "hello", "net-check", "system-facts"])
        #expect(set["hello"]?.stages.map(\.kind) == [.then, .map, .map, .done])
        #expect(set["system-facts"]?.stages.first?.kind == .when)
        #expect(set["fallback"]?.stages.map(\.kind) == [.then, .recover, .map, .then, .catch, .finally])
    }

    @Test func discoveryFromTheRepositoryRootFindsIt() throws {
        let location = try ConfigLocator.locate(explicitPath: nil, environment: [:], currentDirectory: repositoryRoot)
        #expect(location == .init(path: repositoryRoot + "/config/jobd.yaml", reason: .workingDirectory))
    }
}

@Suite struct ConfigurationTests {
    @Test func loadsConfigAndDefinitionsTogether() throws {
        let folder = try makeTemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder + "/defs", withIntermediateDirectories: false)
        try write("definitions: defs\nQ: { io: { concurrency: 1 } }\n", to: folder + "/jobd.yaml")
        try write("pipeline:\n  - then: a\n    run: [x]\n    on: io\n", to: folder + "/defs/one.yaml")
        let location = ConfigLocator.Location(path: folder + "/jobd.yaml", reason: .commandLine)
        let configuration = try Configuration.load(at: location).get()
        #expect(configuration.definitions.names == ["one"])
        #expect(configuration.daemon.definitions == folder + "/defs")
    }

    @Test func reportsProblemsOfConfigAndDefinitionsInOneList() throws {
        let folder = try makeTemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: false)
        try write("log: { level: loud }\n", to: folder + "/jobd.yaml")
        try write("pipeline:\n  - then: a\n    run: [x]\n    on: nowhere\n", to: folder + "/jobs.d/one.yaml")
        let result = Configuration.load(at: .init(path: folder + "/jobd.yaml", reason: .commandLine))
        #expect(result.value == nil)
        #expect(result.diagnostics.map(\.code) == [.invalidValue, .unknownQueue])
        #expect(result.diagnostics.map(\.position.path) == [folder + "/jobd.yaml", folder + "/jobs.d/one.yaml"])
    }
}
