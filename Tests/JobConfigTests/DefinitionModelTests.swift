import JobConfig
import Testing

@Suite struct DefinitionModelTests {
    /// DESIGN.md's example, with every option used once.
    let nightly = """
        name: nightly-report
        description: Sales report for yesterday
        pool: batch
        timeout: 10m
        retry: { attempts: 3, backoff: 2s, max-backoff: 1m, jitter: true }
        env: { REPORT_DIR: /srv/reports, LEVEL: 2 }
        cwd: /srv
        pipeline:
          - then: fetch
            run: [/usr/local/bin/fetch-sales, --day, yesterday, 5]
          - map: total
            transform: { json: .total }
          - done: publish
            shell: "publish-report >> /var/log/report.log"
            on: return
            timeout: 30s
            retry: { attempts: 5, jitter: false }
            env: { LEVEL: "3", EXTRA: "" }
            cwd: /tmp
            idempotent: false
          - catch: alert
            run: [/usr/local/bin/page-oncall]
            on: slow
          - finally: cleanup
            run: [rm, -rf, /tmp/report]
        """

    @Test func designExampleParsesIntoTheModel() throws {
        let job = try checkDefinition(nightly, path: "/defs/nightly.yaml").get()
        #expect(job.name == "nightly-report")
        #expect(job.description == "Sales report for yesterday")
        #expect(job.pool == "batch")
        #expect(job.timeout == .seconds(600))
        let jobRetry = RetryPolicy(attempts: 3, backoff: .seconds(2), maxBackoff: .seconds(60), jitter: true)
        #expect(job.retry == jobRetry)
        #expect(job.env == ["REPORT_DIR": "/srv/reports", "LEVEL": "2"])
        #expect(job.cwd == "/srv")
        #expect(job.sourcePosition == SourcePosition(path: "/defs/nightly.yaml", line: 1, column: 7))

        #expect(job.stages.map(\.name) == ["fetch", "total", "publish", "alert", "cleanup"])
        #expect(job.stages.map(\.kind) == [.then, .map, .done, .catch, .finally])
        #expect(job.stages.map(\.position) == [0, 1, 2, 3, 4])
        #expect(job.stages.map(\.queue) == ["map", "map", "return", "slow", "return"])
        #expect(job.stages.map(\.queueOverride) == [nil, nil, "return", "slow", nil])

        let fetch = job.stages[0]
        #expect(fetch.action == .run(["/usr/local/bin/fetch-sales", "--day", "yesterday", "5"]))
        #expect(fetch.retry == jobRetry)
        #expect(fetch.env == job.env)
        #expect(fetch.cwd == "/srv")
        #expect(fetch.timeout == nil)
        #expect(fetch.idempotent)
        #expect(fetch.sourcePosition.line == 9)

        #expect(job.stages[1].action == .transform(.json(try JSONPath(parsing: ".total"))))

        let publish = job.stages[2]
        #expect(publish.action == .shell("publish-report >> /var/log/report.log"))
        #expect(publish.timeout == .seconds(30))
        #expect(
            publish.retry == RetryPolicy(attempts: 5, backoff: .seconds(2), maxBackoff: .seconds(60), jitter: false))
        #expect(publish.env == ["REPORT_DIR": "/srv/reports", "LEVEL": "3", "EXTRA": ""])
        #expect(publish.cwd == "/tmp")
        #expect(!publish.idempotent)
        #expect(job.stage(named: "cleanup")?.action == .run(["rm", "-rf", "/tmp/report"]))
    }

    @Test func minimalDefinitionTakesDefaultsAndTheFileName() throws {
        let job = try checkDefinition("pipeline:\n  - then: only\n    run: [\"true\"]\n", path: "/defs/tiny-job.yml")
            .get()
        #expect(job.name == "tiny-job")
        #expect(job.pool == "default")
        #expect(job.timeout == nil)
        #expect(job.retry == .default)
        #expect(job.env.isEmpty)
        #expect(job.cwd == nil)
        #expect(
            job.stages == [
                StageDefinition(
                    position: 0, name: "only", kind: .then, action: .run(["true"]),
                    sourcePosition: SourcePosition(path: "/defs/tiny-job.yml", line: 2, column: 5))
            ])
    }

    @Test func everyKindAndActionParses() throws {
        let yaml = """
            pipeline:
              - firstly: a
                sleep: 50ms
              - then: b
                shell: cat
              - get: c
                run: [tee, /dev/null]
              - tap: d
                run: ["true"]
              - when: e
                all:
                  - run: [echo, one]
                  - shell: echo two
                  - sleep: 0s
              - race: f
                any:
                  - { run: [echo, fast] }
                  - { fail: too slow }
              - map: g
                transform: trim
              - map: h
                transform: upper
              - map: i
                transform: lower
              - recover: j
                fail: still broken
              - ensure: k
                run: ["true"]
              - done: l
                run: [cat]
              - catch: m
                run: ["true"]
              - finally: n
                run: ["true"]
            """
        let job = try checkDefinition(yaml).get()
        #expect(
            job.stages.map(\.action) == [
                .sleep(.milliseconds(50)), .shell("cat"), .run(["tee", "/dev/null"]), .run(["true"]),
                .all([.run(["echo", "one"]), .shell("echo two"), .sleep(.zero)]),
                .any([.run(["echo", "fast"]), .fail("too slow")]),
                .transform(.trim), .transform(.upper), .transform(.lower), .fail("still broken"),
                .run(["true"]), .run(["cat"]), .run(["true"]), .run(["true"]),
            ])
        // `each` takes a definition to start child jobs of: ChildDefinitionTests.
        #expect(Set(job.stages.map(\.kind)) == Set(StageKind.allCases).subtracting([.each]))
        #expect(
            job.stages.map(\.queue) == [
                "map", "map", "map", "map", "map", "map", "map", "map", "map", "map",
                "return", "return", "return", "return",
            ])
    }

    @Test func defaultQueuesFollowPromiseKit() {
        let onMap: [StageKind] = [.firstly, .then, .map, .get, .tap, .recover, .when, .race, .each]
        let onReturn: [StageKind] = [.done, .catch, .ensure, .finally]
        #expect(onMap.allSatisfy { $0.defaultQueue == "map" })
        #expect(onReturn.allSatisfy { $0.defaultQueue == "return" })
        #expect(Set(onMap + onReturn) == Set(StageKind.allCases))
        #expect(StageKind.recover.trigger == .rejected)
        #expect(StageKind.tap.trigger == .always)
        #expect(StageKind.done.trigger == .fulfilled)
    }

    @Test func yamlAnchorsAndQuotedKeysWork() throws {
        let yaml = """
            retry: &r { attempts: 2 }
            pipeline:
              - then: a
                run: [x]
                retry: *r
              - "then": b
                "run": ["y"]
            """
        let job = try checkDefinition(yaml).get()
        #expect(job.stages[0].retry.attempts == 2)
        #expect(job.stages[1].action == .run(["y"]))
    }

    @Test func onKeyIsNotTakenForABoolean() throws {
        // YAML 1.1 reads a plain `on` as true; as a key it must still mean `on`.
        let job = try checkDefinition("pipeline:\n  - then: a\n    run: [x]\n    on: slow\n").get()
        #expect(job.stages[0].queue == "slow")
    }
}

@Suite struct RetryPolicyTests {
    @Test func delaysDoubleUpToTheCeiling() {
        let policy = RetryPolicy(attempts: 6, backoff: .seconds(1), maxBackoff: .seconds(5), jitter: false)
        #expect(
            (1...6).map { policy.nominalDelay(afterAttempt: $0) } == [
                .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), nil,
            ])
        #expect(RetryPolicy.default.nominalDelay(afterAttempt: 1) == nil)
    }

    @Test func jitterStaysBetweenHalfAndAll() {
        let policy = RetryPolicy(attempts: 3, backoff: .seconds(4), maxBackoff: .seconds(60), jitter: true)
        var generator = SystemRandomNumberGenerator()
        var seen = Set<Duration>()
        for _ in 0..<200 {
            let delay = policy.delay(afterAttempt: 2, using: &generator)!
            #expect(delay >= .seconds(4) && delay <= .seconds(8))
            seen.insert(delay)
        }
        #expect(seen.count > 1)
    }
}
