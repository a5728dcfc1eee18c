import JobConfig
import Testing

/// Each rule of the definition format: the problem is reported once, with
/// its code, at the offending line.
@Suite struct DefinitionValidationTests {
    @Test func unknownKeysAtJobStageAndRetryLevel() {
        let d = checkDefinition(
            """
            name: a
            poool: default
            pipeline:
              - then: x
                run: [x]
                retires: 2
                retry: { attempts: 2, jiter: true }
            """
        ).diagnostics
        expectDiagnostic(d, .unknownKey, line: 2, column: 1, contains: "did you mean 'pool'?")
        expectDiagnostic(d, .unknownKey, line: 6, column: 5, contains: "'retires'")
        expectDiagnostic(d, .unknownKey, line: 7, contains: "did you mean 'jitter'?")
        #expect(d.count == 3)
    }

    @Test func stageWithoutKind() {
        let d = checkDefinition(
            """
            pipeline:
              - then: a
                run: [x]
              - run: [y]
                timeout: 5s
            """
        ).diagnostics
        expectDiagnostic(d, .missingStageKind, line: 4, column: 5, contains: "stage 2 has no kind")
        #expect(d.count == 1)
    }

    @Test func stageWithTwoKinds() {
        let d = checkDefinition(
            """
            pipeline:
              - then: a
                map: b
                run: [x]
            """
        ).diagnostics
        expectDiagnostic(d, .multipleStageKinds, line: 3, column: 5, contains: "'then' and 'map'")
    }

    @Test func transformOutsideMap() {
        let d = checkDefinition(
            """
            pipeline:
              - then: a
                transform: trim
            """
        ).diagnostics
        expectDiagnostic(d, .actionNotAllowed, line: 3, column: 5, contains: "only goes in a 'map' stage")
        #expect(d.count == 1)
    }

    @Test func mapRequiresATransform() {
        let d = checkDefinition(
            """
            pipeline:
              - map: a
                run: [x]
              - map: b
                timeout: 1s
            """
        ).diagnostics
        expectDiagnostic(d, .actionNotAllowed, line: 3, contains: "takes a 'transform'")
        expectDiagnostic(d, .missingAction, line: 4, contains: "add 'transform:'")
        #expect(d.count == 2)
    }

    @Test func allAndAnyOutsideWhenAndRace() {
        let d = checkDefinition(
            """
            pipeline:
              - then: a
                all: [{run: [x]}]
              - then: b
                any: [{run: [x]}]
              - when: c
                any: [{run: [x]}]
              - race: d
                run: [x]
            """
        ).diagnostics
        expectDiagnostic(d, .actionNotAllowed, line: 3, contains: "'all' only goes in a 'when' stage")
        expectDiagnostic(d, .actionNotAllowed, line: 5, contains: "'any' only goes in a 'race' stage")
        expectDiagnostic(d, .actionNotAllowed, line: 7, contains: "'any' only goes in a 'race' stage")
        expectDiagnostic(d, .actionNotAllowed, line: 9, contains: "takes an 'any:' list")
        #expect(d.count == 4)
    }

    @Test func actionListItems() {
        let d = checkDefinition(
            """
            pipeline:
              - when: a
                all:
                  - run: [x]
                  - transform: trim
                  - { run: [y], shell: z }
                  - {}
                  - just text
                  - run: []
              - race: b
                any: []
            """
        ).diagnostics
        expectDiagnostic(d, .actionNotAllowed, line: 5, contains: "cannot be nested")
        expectDiagnostic(d, .multipleActions, line: 6, contains: "'run' and 'shell'")
        expectDiagnostic(d, .missingAction, line: 7)
        expectDiagnostic(d, .wrongType, line: 8, contains: "must be a mapping")
        expectDiagnostic(d, .invalidValue, line: 9, contains: "empty list")
        expectDiagnostic(d, .invalidValue, line: 11, contains: "at least one action")
        #expect(d.count == 6)
    }

    @Test func missingAndDoubleActions() {
        let d = checkDefinition(
            """
            pipeline:
              - then: a
                on: return
              - then: b
                run: [x]
                shell: y
            """
        ).diagnostics
        expectDiagnostic(d, .missingAction, line: 2, column: 5, contains: "stage 'a' has no action")
        expectDiagnostic(d, .multipleActions, line: 6, column: 5, contains: "'run' and 'shell'")
        #expect(d.count == 2)
    }

    @Test func unknownQueueAndPool() {
        let d = checkDefinition(
            """
            pool: huge
            pipeline:
              - then: a
                run: [x]
                on: fast
            """
        ).diagnostics
        expectDiagnostic(d, .unknownPool, line: 1, column: 7, contains: "'batch', 'default'")
        expectDiagnostic(d, .unknownQueue, line: 5, column: 9, contains: "'map', 'return', 'slow'")
        #expect(d.count == 2)
    }

    @Test func badDurations() {
        let d = checkDefinition(
            """
            timeout: 10 minutes
            retry: { backoff: -1s, max-backoff: 1y }
            pipeline:
              - then: a
                sleep: 5
              - then: b
                run: [x]
                timeout: 0s
            """
        ).diagnostics
        expectDiagnostic(d, .badDuration, line: 1, column: 10, contains: "invalid duration \"10 minutes\"")
        #expect(d.filter { $0.code == .badDuration && $0.position.line == 2 }.count == 2)
        expectDiagnostic(d, .badDuration, line: 5, contains: "needs a unit")
        expectDiagnostic(d, .badDuration, line: 8, contains: "longer than zero")
        #expect(d.count == 5)
    }

    @Test func emptyAndMissingPipeline() {
        expectDiagnostic(checkDefinition("pipeline: []\n").diagnostics, .emptyPipeline, line: 1, column: 11)
        expectDiagnostic(checkDefinition("name: x\n").diagnostics, .missingKey, line: 1, contains: "'pipeline'")
        let empty = checkDefinition("# just a comment\n").diagnostics
        #expect(empty.map(\.code) == [.emptyPipeline])
        #expect(
            empty.first?.description
                == "/defs/job.yaml: error: the file is empty; a job definition needs at least a 'pipeline' of stages")
    }

    @Test func duplicateStageNames() {
        let d = checkDefinition(
            """
            pipeline:
              - then: fetch
                run: [x]
              - then: fetch
                run: [y]
              - map: fetch
                transform: nope
            """
        ).diagnostics
        expectDiagnostic(d, .duplicateStageName, line: 4, column: 11, contains: "first used at line 2")
        expectDiagnostic(d, .duplicateStageName, line: 6, contains: "'fetch'")
        expectDiagnostic(d, .badTransform, line: 7, contains: "unknown transform 'nope'")
        #expect(d.count == 3)
    }

    @Test func wrongValueTypes() {
        let d = checkDefinition(
            """
            name: [a]
            env: [A, B]
            cwd: relative/dir
            retry: 3
            pipeline:
              - then: a
                run: echo hi
              - then: b
                shell: [echo, hi]
              - then: c
                run: [x]
                idempotent: maybe
                env: { A: [1] }
              - then: d
                fail:
              - map: e
                transform: { json: 5x, other: 1 }
              - map: f
                transform: { json: "a.b" }
              - then:
                run: [x]
            """
        ).diagnostics
        expectDiagnostic(d, .wrongType, line: 1, contains: "must be text")
        expectDiagnostic(d, .wrongType, line: 2, contains: "must be a mapping")
        expectDiagnostic(d, .invalidValue, line: 3, contains: "absolute path")
        expectDiagnostic(d, .wrongType, line: 4, contains: "'retry' must be a mapping")
        expectDiagnostic(d, .wrongType, line: 7, contains: "must be a list")
        expectDiagnostic(d, .wrongType, line: 9, contains: "must be text, found a list")
        expectDiagnostic(d, .wrongType, line: 12, contains: "true or false")
        expectDiagnostic(d, .wrongType, line: 13, contains: "'A'")
        expectDiagnostic(d, .wrongType, line: 15, contains: "must be text, found nothing")
        expectDiagnostic(d, .badTransform, line: 17, contains: "exactly one key")
        expectDiagnostic(d, .badTransform, line: 19, contains: "must start with '.'")
        expectDiagnostic(d, .wrongType, line: 20, contains: "the name of stage 7")
        #expect(d.count == 12)
    }

    @Test func namesAreChecked() {
        let d = checkDefinition(
            """
            name: "nightly report"
            pipeline:
              - then: "-x"
                run: [x]
            """
        ).diagnostics
        expectDiagnostic(d, .invalidName, line: 1, contains: "letters, digits")
        expectDiagnostic(d, .invalidName, line: 3, contains: "must not start with")
        let fromFile = checkDefinition("pipeline: [{then: a, run: [x]}]\n", path: "/defs/my job.yaml").diagnostics
        #expect(fromFile.map(\.code) == [.invalidName])
        #expect(fromFile.first?.message.contains("add 'name:'") == true)
    }

    @Test func pipelineShapeFollowsThePromiseChain() {
        let d = checkDefinition(
            """
            pipeline:
              - then: a
                run: [x]
              - firstly: b
                run: [x]
              - catch: c
                run: [x]
              - ensure: d
                run: [x]
              - finally: e
                run: [x]
              - finally: f
                run: [x]
            """
        ).diagnostics
        expectDiagnostic(d, .misplacedStage, line: 4, contains: "'firstly' can only be the first")
        expectDiagnostic(d, .misplacedStage, line: 8, contains: "only 'finally' can follow a 'catch' (line 6)")
        expectDiagnostic(d, .misplacedStage, line: 10, contains: "must be the last")
        #expect(d.count == 3)
    }

    @Test func yamlSyntaxErrorIsOneDiagnosticWithALine() {
        let d = checkDefinition("pipeline:\n  - then: a\n    run: [x\n  - then: b\n").diagnostics
        #expect(d.count == 1)
        #expect(d.first?.code == .yamlSyntax)
        #expect((d.first?.position.line ?? 0) >= 3)
    }

    @Test func keysThatReadTheSameAreDuplicatesHoweverQuoted() {
        // Every scalar is read as its text, so `1` and "1" name one variable.
        let d = checkDefinition("env: { 1: a, \"1\": b }\npipeline:\n  - then: a\n    run: [x]\n").diagnostics
        #expect(d.map(\.code) == [.yamlSyntax])
        #expect(d.first?.message.contains("duplicate key '1'") == true)
        #expect(d.first?.position.line == 1)
    }

    @Test func twoDocumentsAreRefused() {
        let d = checkDefinition("pipeline: [{then: a, run: [x]}]\n---\npipeline: []\n").diagnostics
        #expect(d.map(\.code) == [.yamlSyntax])
        #expect(d.first?.message.contains("one YAML document") == true)
    }

    @Test func everyProblemOfOneFileIsReportedInLineOrder() {
        let yaml = """
            name: multi
            pool: nowhere
            timeout: forever
            colour: blue
            pipeline:
              - then: a
                transform: trim
              - when: b
                run: [x]
              - map: c
                transform: { json: .x }
                on: elsewhere
              - then: a
                run: [x]
              - sleep: 1s
            """
        let result = checkDefinition(yaml, path: "/defs/multi.yaml")
        #expect(result.value == nil)
        let d = result.diagnostics
        #expect(
            d.map(\.code) == [
                .unknownPool, .badDuration, .unknownKey, .actionNotAllowed, .actionNotAllowed,
                .unknownQueue, .duplicateStageName, .missingStageKind,
            ])
        #expect(d.map(\.position.line) == [2, 3, 4, 7, 9, 12, 13, 15])
        #expect(
            d[0].description
                == "/defs/multi.yaml:2:7: error: unknown pool 'nowhere'; jobd.yaml's 'pools' declares 'batch', 'default'"
        )
    }

    /// A file of one mistake repeated is reported by its first problems and
    /// a count of the rest, not by a line for each.
    @Test func theProblemsReportedForOneFileAreCapped() throws {
        let stages = (0..<50).map { "  - then: s\($0)\n    run: [true]\n    colour: red\n" }.joined()
        let result = checkDefinition("pipeline:\n" + stages)
        #expect(result.value == nil)
        let most = DefinitionLoader.maxDiagnosticsPerFile
        #expect(result.diagnostics.count == most + 1, "\(result.diagnostics)")
        #expect(result.diagnostics.prefix(most).allSatisfy { $0.code == .unknownKey })
        let last = try #require(result.diagnostics.last)
        #expect(last.severity == .error && last.code == .tooManyProblems)
        #expect(last.position.line == 4 + 3 * most, "where the next problem is: \(last)")
        #expect(last.message.hasPrefix("\(50 - most) errors not shown, from here on"), "\(last)")
        #expect(result.diagnostics.errorCount == 50 && result.diagnostics.warningCount == 0)
    }

    @Test func namesAreSummarisedPastTwenty() {
        #expect(DefinitionSet.summary(of: ["b", "a"]) == "a, b")
        let names = (0..<10_001).map { "d" + String(repeating: "0", count: 5 - String($0).count) + String($0) }
        let line = DefinitionSet.summary(of: names.reversed())
        #expect(line == names.prefix(20).joined(separator: ", ") + " and 9981 more")
    }
}
