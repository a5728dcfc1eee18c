import JobConfig
import JobValues
import TestSupport
import Testing

@Suite struct DaemonConfigTests {
    let path = "/srv/jobd/config/jobd.yaml"

    @Test func fullExampleLoadsWithPathsResolvedAgainstTheConfigFolder() throws {
        let yaml = """
            database: ../var/jobd.sqlite
            definitions: jobs.d
            socket: /run/jobd.sock
            Q:
              map:    { concurrency: 8 }
              return: { concurrency: 2 }
              slow:   { concurrency: 1 }
            pools:
              default: 4
              batch: 2
            log: { level: debug }
            store: { durability: full, value-cap: 4MiB, retention: 7d }
            shutdown-grace: 1m
            kill-grace: 2s
            """
        let config = try DaemonConfiguration.parse(yaml: yaml, path: path).get()
        #expect(config.sourcePath == path)
        #expect(config.database == "/srv/jobd/var/jobd.sqlite")
        #expect(config.definitions == "/srv/jobd/config/jobs.d")
        #expect(config.socket == "/run/jobd.sock")
        #expect(
            config.queues == [
                "map": .init(concurrency: 8), "return": .init(concurrency: 2), "slow": .init(concurrency: 1),
            ])
        #expect(config.pools == ["default": 4, "batch": 2])
        #expect(config.log.level == .debug)
        #expect(
            config.store
                == StoreConfiguration(
                    durability: .full, valueCap: .mebibytes(4), retention: .duration(.seconds(7 * 86_400))))
        #expect(config.shutdownGrace == .seconds(60))
        #expect(config.killGrace == .seconds(2))
        #expect(
            config.definitionContext
                == DefinitionContext(
                    queues: ["map", "return", "slow"], pools: ["default", "batch"], valueCap: 4 << 20))
    }

    @Test func emptyFileGivesDefaults() throws {
        for yaml in ["", "# nothing here\n", "~\n"] {
            let config = try DaemonConfiguration.parse(yaml: yaml, path: path).get()
            #expect(config.database == "/var/lib/jobd/jobd.sqlite")
            #expect(config.definitions == "/srv/jobd/config/jobs.d")
            #expect(config.socket == "/run/jobd/jobd.sock")
            #expect(config.queues == ["map": .init(concurrency: 4), "return": .init(concurrency: 1)])
            #expect(config.pools == ["default": 16])
            #expect(config.log.level == .info)
            #expect(config.store.durability == .normal)
            #expect(config.store.valueCap == .mebibytes(1))
            #expect(config.shutdownGrace == .seconds(30))
            #expect(config.lease == .seconds(30))
        }
    }

    @Test func leaseIsBetweenThreeSecondsAndAnHour() throws {
        #expect(try DaemonConfiguration.parse(yaml: "lease: 10s\n", path: path).get().lease == .seconds(10))
        #expect(try DaemonConfiguration.parse(yaml: "lease: 1h\n", path: path).get().lease == .seconds(3600))
        for bad in ["2s", "61m", "0s", "soon"] {
            let diagnostics = DaemonConfiguration.parse(yaml: "lease: \(bad)\n", path: path).diagnostics
            #expect(diagnostics.count == 1 && diagnostics.first?.position.line == 1, "\(bad): \(diagnostics)")
        }
        #expect(
            DaemonConfiguration.parse(yaml: "lease: 1s\n", path: path).diagnostics.first?.message.contains("3s to 1h")
                == true)
    }

    /// The listener may not take the control socket's path, wherever
    /// `socket` stands in the file.
    @Test func theListenerAndTheControlSocketHavePathsOfTheirOwn() throws {
        for yaml in [
            "socket: run/x.sock\nhttp: { listen: unix:run/x.sock }\n",
            "http: { listen: unix:run/x.sock }\nsocket: run/x.sock\n",
        ] {
            let diagnostics = DaemonConfiguration.parse(yaml: yaml, path: path).diagnostics
            let line = yaml.hasPrefix("http") ? 1 : 2
            expectDiagnostic(
                diagnostics, .invalidValue, line: line, contains: "which is the control socket's path ('socket')")
        }
        let apart = try DaemonConfiguration.parse(
            yaml: "socket: run/x.sock\nhttp: { listen: unix:run/http.sock }\n", path: path
        ).get()
        #expect(apart.http?.listen.description.hasSuffix("/run/http.sock") == true)
    }

    @Test func requiredQueuesAndDefaultPoolStayWhenOthersAreAdded() throws {
        let config = try DaemonConfiguration.parse(
            yaml: "Q: { io: { concurrency: 3 } }\npools: { big: 2 }\n", path: path
        ).get()
        #expect(config.queues.keys.sorted() == ["io", "map", "return"])
        #expect(config.pools == ["default": 16, "big": 2])
    }

    @Test func retentionForever() throws {
        let config = try DaemonConfiguration.parse(yaml: "store: { retention: forever }\n", path: path).get()
        #expect(config.store.retention == .forever)
    }

    @Test func everyErrorInTheFileIsReportedWithItsLine() {
        let yaml = """
            database: ../var/jobd.sqlite
            definitons: jobs.d
            Q:
              map: { concurrency: 0 }
              return: { concurency: 1 }
              io: 3
            pools:
              default: -1
              "bad name": 2
            log: { level: loud }
            store:
              durability: sometimes
              value-cap: 12 parsecs
              retention: 1y
            shutdown-grace: 30
            socket: [a, b]
            """
        let result = DaemonConfiguration.parse(yaml: yaml, path: path)
        #expect(result.value == nil)
        let d = result.diagnostics
        expectDiagnostic(d, .unknownKey, line: 2, column: 1, contains: "did you mean 'definitions'?")
        expectDiagnostic(d, .invalidValue, line: 4, contains: "between 1 and 1024")
        expectDiagnostic(d, .unknownKey, line: 5, contains: "'concurency'")
        expectDiagnostic(d, .missingKey, line: 5, contains: "'concurrency'")
        expectDiagnostic(d, .wrongType, line: 6, contains: "queue 'io' must be a mapping")
        expectDiagnostic(d, .invalidValue, line: 8, contains: "pool 'default'")
        expectDiagnostic(d, .invalidName, line: 9, contains: "bad name")
        expectDiagnostic(d, .invalidValue, line: 10, contains: "loud")
        expectDiagnostic(d, .invalidValue, line: 12, contains: "sometimes")
        expectDiagnostic(d, .badSize, line: 13)
        expectDiagnostic(d, .badDuration, line: 14, contains: "unknown unit \"y\"")
        expectDiagnostic(d, .badDuration, line: 15, contains: "needs a unit")
        expectDiagnostic(d, .wrongType, line: 16, contains: "'socket' must be text")
        #expect(d.count == 13)
        #expect(d.map(\.position.line) == d.map(\.position.line).sorted())
        #expect(d.allSatisfy { $0.description.hasPrefix("\(path):\($0.position.line):\($0.position.column): error: ") })
    }

    @Test func yamlSyntaxErrorsPointAtTheirPlace() {
        let result = DaemonConfiguration.parse(yaml: "database: x\nQ: [unclosed\nlog: {}\n", path: path)
        #expect(result.value == nil)
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics.first?.code == .yamlSyntax)
        #expect((result.diagnostics.first?.position.line ?? 0) >= 2)
    }

    @Test func duplicateKeysAreReported() {
        let result = DaemonConfiguration.parse(yaml: "socket: a\nlog: {}\nsocket: b\n", path: path)
        #expect(result.diagnostics.map(\.code) == [.yamlSyntax])
        #expect(result.diagnostics.first?.message.contains("'socket'") == true)
    }

    @Test func rootMustBeAMapping() {
        let result = DaemonConfiguration.parse(yaml: "- database\n", path: path)
        expectDiagnostic(result.diagnostics, .wrongType, line: 1, contains: "mapping")
    }

    @Test func loadReadsFromDisk() throws {
        let folder = try makeTemporaryFolder()
        try write("database: db/jobd.sqlite\n", to: folder + "/jobd.yaml")
        let config = try DaemonConfiguration.load(path: folder + "/jobd.yaml").get()
        #expect(config.database == folder + "/db/jobd.sqlite")
        let missing = DaemonConfiguration.load(path: folder + "/absent.yaml")
        #expect(missing.diagnostics.map(\.code) == [.unreadableFile])
        #expect(missing.diagnostics.first?.description == "\(folder)/absent.yaml: error: the file does not exist")
    }

    @Test func throwingAccessorCarriesEveryDiagnostic() {
        #expect {
            try DaemonConfiguration.parse(yaml: "log: 1\npools: 2\n", path: path).get()
        } throws: { error in
            guard let error = error as? DiagnosticsError else { return false }
            return error.diagnostics.count == 2 && error.description.split(separator: "\n").count == 2
        }
    }
}
