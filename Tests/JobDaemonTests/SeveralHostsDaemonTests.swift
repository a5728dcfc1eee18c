import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
@_spi(Maintenance) import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several hosts on one PostgreSQL, with the real binaries: three
/// jobds with configs, sockets and node names of their own, and jobctl from a
/// fourth folder where no jobd runs. One jobd is SIGKILLed and PostgreSQL
/// restarted while the jobs run; every job still ends fulfilled, once, with
/// the right result, and the work is spread over the hosts.
@Suite(.serialized) struct SeveralHostsDaemonTests {
    /// Three stages of `sh`: the result is 2 × input + 1. On a host whose
    /// environment has `JOBD_TEST_HOLD`, the first stage never ends: its jobs
    /// are all still running when that host is killed, so each must be taken
    /// over. (It writes a dot every 0.2 s, so SIGPIPE ends it once its jobd is gone.)
    static let work = """
        pipeline:
          - then: double
            run: [sh, -c, 'read x; sleep 1; while [ -n "$JOBD_TEST_HOLD" ]; do printf .; sleep 0.2; done; echo $((x * 2))']
          - then: plus-one
            run: [sh, -c, 'read x; sleep 0.1; echo $((x + 1))']
          - then: stamp
            run: [sh, -c, 'read x; echo "$x"']
        """
    static let hold = """
        pipeline:
          - then: hold
            run: [sleep, '60']
        """

    struct Cluster {
        let server: TestPostgres
        let url: String
        let hosts: [DaemonHarness]
        /// A folder with a jobd.yaml for jobctl and no jobd.
        let client: DaemonHarness

        /// With `inNamespaces`: the server's network namespace, and each host's.
        let serverNamespace: NetworkNamespace?
        let hostNamespaces: [NetworkNamespace]
        let sharesServer: Bool

        /// `firstYAML`: more of jobd.yaml for the first host only; `hostYAML`: for every host.
        /// `definitions`: more besides `work` and `hold`.
        /// `inNamespaces`: each jobd runs in a network namespace of its own
        /// and reaches the server over TCP, with a password (`PGPASSWORD`).
        /// `holdFirstHost`: the first host never gets past a `work` job's first stage.
        /// `sharingTheServer`: on the suites' shared server, in a schema of its
        /// own (for a test that neither stops nor restarts the server).
        init(
            hosts count: Int, firstYAML: String = "", hostYAML: String = "", definitions more: [String: String] = [:],
            inNamespaces: Bool = false, holdFirstHost: Bool = false, sharingTheServer: Bool = false
        ) async throws {
            // With namespaces, the server runs in one of its own, linked to each host's.
            serverNamespace = inNamespaces ? try NetworkNamespace(server: ()) : nil
            sharesServer = sharingTheServer && !inNamespaces
            if let serverNamespace {
                server = try await TestPostgres.make(in: serverNamespace.name, allowing: NetworkNamespace.network)
            } else if sharesServer {
                server = try await TestPostgres.shared()
            } else {
                server = try await TestPostgres.make()
            }
            let schema = sharesServer ? "&schema=hosts_\(UInt32.random(in: 0...UInt32.max))" : ""
            let url = "postgres://postgres@/jobd_test?host=\(server.folder)&port=\(server.port)\(schema)"
            self.url = url
            let definitions = ["work": SeveralHostsDaemonTests.work, "hold": SeveralHostsDaemonTests.hold]
                .merging(more) { $1 }
            let password = "net-\(UInt32.random(in: 0...UInt32.max))"
            if inNamespaces { try await server.psql("ALTER ROLE postgres PASSWORD '\(password)'") }
            let hostNamespaces =
                try serverNamespace.map { server in
                    try (0..<count).map { try NetworkNamespace(index: $0, linkedTo: server) }
                } ?? []
            self.hostNamespaces = hostNamespaces
            hosts = try (0..<count).map { [hostNamespaces, server] index in
                let namespace = hostNamespaces.isEmpty ? nil : hostNamespaces[index]
                let host = try DaemonHarness(
                    yaml: "node: host-\(index)\nlease: 3s\npoll-interval: 1s\npools: { default: 4 }\n"
                        + hostYAML + (index == 0 ? firstYAML : ""),
                    definitions: definitions,
                    database: namespace.map { "postgres://postgres@\($0.gateway):\(server.port)/jobd_test" } ?? url)
                host.namespace = namespace
                if namespace != nil { host.environment["PGPASSWORD"] = password }
                if index == 0 && holdFirstHost { host.environment["JOBD_TEST_HOLD"] = "1" }
                return host
            }
            client = try DaemonHarness(yaml: "node: client", definitions: definitions, database: url)
        }

        /// Stops the server, removes the namespaces.
        func tearDown() {
            if !sharesServer { server.stop() }
            for namespace in hostNamespaces + [serverNamespace].compactMap({ $0 }) { namespace.remove() }
        }

        func jobctl(_ arguments: [String], stdin: String? = nil) async throws -> String {
            let result: (status: Int32, output: String, error: String)
            if let stdin {
                let file = client.folder + "/stdin"
                try stdin.write(toFile: file, atomically: true, encoding: .utf8)
                result = try await runCommand(
                    builtProduct("jobctl"), arguments + ["--batch", file, "--config", client.configPath])
            } else {
                result = try await runCommand(builtProduct("jobctl"), arguments + ["--config", client.configPath])
            }
            guard result.status == 0 else {
                throw TestFailure("jobctl \(arguments.joined(separator: " ")): exit \(result.status): \(result.error)")
            }
            return result.output
        }

        func openStore() async throws -> (PostgresJobStore, Task<Void, any Error>) {
            let store = try await PostgresJobStore(PostgresJobStoreConfiguration(url: url, environment: [:]))
            return (store, Task { try await store.run() })
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func threeHostsOneKilledLoseNoJob() async throws {
        try await threeHostsOneKilled(restartingTheServer: false)
    }

    /// The server restart catches writes in flight: each is answered and
    /// made again, including a query PostgresNIO leaves unanswered on a
    /// closed connection (see `withWatchedConnection`).
    @Test(.timeLimit(.minutes(3)))
    func threeHostsOneKilledAndTheServerRestartedLoseNoJob() async throws {
        try await threeHostsOneKilled(restartingTheServer: true)
    }

    /// The same, each host in a network namespace of its own, reaching
    /// PostgreSQL over TCP (veth links) with a password.
    @Test(.timeLimit(.minutes(3)))
    func threeHostsInNetworkNamespacesOneKilledAndTheServerRestartedLoseNoJob() async throws {
        try await threeHostsOneKilled(restartingTheServer: true, inNamespaces: true)
    }

    func threeHostsOneKilled(restartingTheServer: Bool, inNamespaces: Bool = false) async throws {
        let cluster = try await Cluster(hosts: 3, inNamespaces: inNamespaces, holdFirstHost: true)
        defer { cluster.tearDown() }
        for host in cluster.hosts { try host.start() }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }

        let inputs = (1...120).map(String.init)
        let ids = try await cluster.jobctl(["submit", "work"], stdin: inputs.joined(separator: "\n") + "\n")
            .split(separator: "\n").compactMap { Int64($0) }
        #expect(ids.count == inputs.count)

        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        // Once jobs run everywhere, host-0 dies and the server restarts.
        var onHost0: [Int64] = []
        try await waitUntil(.seconds(30)) {
            let running = try await store.list(JobQuery(states: [.running], limit: 100)).jobs
            let nodes = Set(running.compactMap(\.leaseOwner).map(Self.node))
            onHost0 = running.filter { $0.leaseOwner.map(Self.node) == "host-0" }.map(\.id)
            return nodes.contains("host-0") && nodes.count >= 2
        }
        #expect(!onHost0.isEmpty)
        let killed = Date()
        cluster.hosts[0].signal(SIGKILL)
        if restartingTheServer {
            try await Task.sleep(for: .milliseconds(300))
            let server = cluster.server
            await server.kill()
            try await Task.sleep(for: .seconds(1))
            try await server.start()
        }

        try await waitUntil(.seconds(90)) {
            try await store.list(JobQuery(states: [.fulfilled], limit: 1000)).jobs.count >= ids.count
        }
        for (id, input) in zip(ids, inputs) {
            let detail = try #require(try await store.job(id))
            #expect(detail.job.state == .fulfilled, "job \(id): \(detail.job.state) \(detail.job.error ?? "")")
            let result = detail.job.result.map { String(decoding: $0, as: UTF8.self) }
            #expect(result?.trimmingCharacters(in: .whitespacesAndNewlines) == String(Int(input)! * 2 + 1), "job \(id)")
        }
        if inNamespaces {
            // The live hosts' connections came over their links, from their own addresses.
            let addresses = try await store.queryStrings(
                "SELECT DISTINCT host(client_addr) FROM pg_stat_activity WHERE client_addr IS NOT NULL")
            #expect(Set(addresses.compactMap { $0 }) == Set(cluster.hostNamespaces.dropFirst().map(\.address)))
        }
        // host-0 never finished a job: each it ran was taken over by another host.
        for id in onHost0 {
            let job = try #require(try await store.job(id)).job
            #expect(job.leaseOwner.map(Self.node) != "host-0", "job \(id): \(job)")
            #expect(job.claims >= 2, "job \(id): \(job)")
            #expect(job.finishedAt.map { $0 > killed } == true, "job \(id): \(job)")
        }
        // Each job ran to its end once: one job per input, no duplicates.
        let all = try await store.list(JobQuery(definition: "work", limit: 1000)).jobs
        #expect(all.count == ids.count)
        // The work was spread: the two live hosts both finished jobs.
        let finishers = Set(all.compactMap(\.leaseOwner).map(Self.node))
        #expect(finishers.isSuperset(of: ["host-1", "host-2"]), "\(finishers)")

        for host in cluster.hosts.dropFirst() { host.signal(SIGTERM) }
        for host in cluster.hosts.dropFirst() { #expect(await host.exitStatus() == 0, "\(host.log)") }
        await store.close()
    }

    @Test(.timeLimit(.minutes(2)))
    func aCancelFromAHostWithoutJobdStopsTheJobWhereItRuns() async throws {
        let cluster = try await Cluster(hosts: 2, firstYAML: "http: { listen: unix:state/http.sock }")
        defer { cluster.tearDown() }
        for host in cluster.hosts { try host.start() }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let id = try #require(
            Int64(
                try await cluster.jobctl(["submit", "hold", "--input", "x"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        try await waitUntil(.seconds(10)) { try await store.job(id)?.job.state == .running }
        let owner = try #require(try await store.job(id)?.job.leaseOwner)
        let host = try #require(cluster.hosts.first { $0.read("jobd.yaml").contains("node: \(Self.node(owner))") })

        #expect(Self.children(of: host.pid).contains("sleep"), "the stage runs on \(owner)")
        // The dashboard of either host shows the job, whichever host runs it.
        let page = try await RawHTTP.get("/", .unix(path: cluster.hosts[0].folder + "/state/http.sock"))
        #expect(page.status == 200)
        #expect(String(decoding: page.body, as: UTF8.self).contains("href=\"jobs/\(id)\""))

        let asked = Date()
        let said = try await cluster.jobctl(["cancel", String(id)])
        #expect(said.contains(Self.node(owner)), "cancel names the node the job runs on: \(said)")
        try await waitUntil(.seconds(5)) { try await store.job(id)?.job.state == .cancelled }
        // By the end the host stamped (the test's own awaits may resume late);
        // jobctl's start and its connection are part of the time: 0.12–0.13 s
        // measured (debug build, load 4). The bound leaves room for a loaded CI.
        let cancelled = try #require(try await store.job(id)?.job)
        let took = try #require(cancelled.finishedAt).timeIntervalSince(asked)
        #expect(took < 3, "cancelled within a second or two")
        #expect(cancelled.state == .cancelled)
        // The `sleep 60` is gone on the host that ran it.
        try await waitUntil(.seconds(5)) { !Self.children(of: host.pid).contains("sleep") }
        #expect(!Self.children(of: host.pid).contains("sleep"))

        for host in cluster.hosts { host.signal(SIGTERM) }
        for host in cluster.hosts { #expect(await host.exitStatus() == 0, "\(host.log)") }
        await store.close()
    }

    /// A stage that writes a line now and then. Its input names the two
    /// followers' output files; after each line it waits (up to 3 s) until
    /// both printed it, and notes in `FIRST.times` how many milliseconds
    /// each took ("late" if it did not), then ends rejected (exit 3).
    static let slowLog = """
        pipeline:
          - then: talk
            shell: |
              read a b
              wait_for() {
                t0=$(date +%s%N); da=; db=
                while :; do
                  grep -q " $1$" "$a" && sa=1 || sa=
                  grep -q " $1$" "$b" && sb=1 || sb=
                  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
                  [ -n "$da" ] || [ -z "$sa" ] || da=$ms
                  [ -n "$db" ] || [ -z "$sb" ] || db=$ms
                  [ -n "$da" ] && [ -n "$db" ] && break
                  [ $ms -lt $2 ] || break
                  sleep 0.02
                done
                echo "$1 ${da:-late} ${db:-late}" >> "$a.times"
              }
              echo "start" >&2
              wait_for start 15000
              for i in 1 2 3 4 5; do
                sleep 0.3
                echo "line $i" >&2
                wait_for "line $i" 3000
              done
              exit 3
        """

    /// `jobctl logs --follow` with each host's config, while one of them
    /// runs the stage: the other reads the database (PostgreSQL), the one
    /// that runs it asks its jobd. Each prints every line within a second
    /// of its writing and exits as the job ended (rejected: 1).
    @Test(.timeLimit(.minutes(2)))
    func logsFollowedFromEitherHostShowEachLineWithinASecond() async throws {
        let cluster = try await Cluster(hosts: 2, definitions: ["slow-log": Self.slowLog], sharingTheServer: true)
        defer { cluster.tearDown() }
        for host in cluster.hosts { try host.start() }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let outputs = cluster.hosts.map { $0.folder + "/follow.out" }
        for output in outputs { try Data().write(to: URL(fileURLWithPath: output)) }
        let id = try #require(
            Int64(
                try await cluster.jobctl(["submit", "slow-log", "--input", outputs.joined(separator: " ")])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let jobctl = builtProduct("jobctl")
        async let first = runCommand(
            "/bin/sh",
            ["-c", "'\(jobctl)' logs \(id) --follow --config '\(cluster.hosts[0].configPath)' > '\(outputs[0])'"])
        async let second = runCommand(
            "/bin/sh",
            ["-c", "'\(jobctl)' logs \(id) --follow --config '\(cluster.hosts[1].configPath)' > '\(outputs[1])'"])
        let results = try await [first, second]

        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        let job = try #require(try await store.job(id)?.job)
        #expect(job.state == .rejected, "\(job.error ?? "")")
        let runner = try #require(
            cluster.hosts.firstIndex { $0.read("jobd.yaml").contains("node: \(Self.node(job.leaseOwner ?? ""))") })
        let expected = ["start"] + (1...5).map { "line \($0)" }
        for (index, result) in results.enumerated() {
            #expect(result.status == 1, "host-\(index): exit 1, as wait does for a rejected job: \(result)")
            let printed = (try? String(contentsOfFile: outputs[index], encoding: .utf8)) ?? ""
            #expect(
                printed.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 2).last.map(String.init) }
                    == expected, "host-\(index): \(printed)")
        }
        // `line N MS0 MS1`: how long each follower took to print each line.
        let times = cluster.hosts[0].read("follow.out.times").split(separator: "\n").map { $0.split(separator: " ") }
        #expect(times.count == expected.count, "\(times)")
        for row in times.dropFirst() {
            for (index, field) in row.suffix(2).enumerated() {
                let place = index == runner ? "on the host that runs it" : "on the other host"
                #expect(Int(field).map { $0 < 1000 } == true, "\(row.joined(separator: " ")): \(place)")
            }
        }
        print("logs --follow, ms per line (runner host-\(runner)): \(times.map { $0.joined(separator: " ") })")

        for host in cluster.hosts { host.signal(SIGTERM) }
        for host in cluster.hosts { #expect(await host.exitStatus() == 0, "\(host.log)") }
        await store.close()
    }

    /// The command names of `pid`'s children.
    static func children(of pid: Int32) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> String? in
            guard Int32(entry) != nil,
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            // pid (comm) state ppid …
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            guard rest.count > 1, Int32(rest[1]) == pid else { return nil }
            return String(stat[stat.index(after: open)..<close])
        }
    }

    /// `NODE/PID/TAG` → `NODE`.
    static func node(_ owner: String) -> String {
        String(owner.split(separator: "/").first ?? "")
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("not within \(limit)")
    }
}
