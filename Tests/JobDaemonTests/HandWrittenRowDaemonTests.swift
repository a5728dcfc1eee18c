import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

/// The real jobd and jobctl on a database with rows written by hand that
/// they cannot read: jobd starts, recovers, claims and serves the other
/// jobs, sets the bad ones aside, and answers every page; jobctl names the
/// row and its column.
@Suite struct HandWrittenRowDaemonTests {
    static let echo = "pipeline:\n  - then: echo\n    run: [cat]\n"

    @Test func jobdKeepsServingBesideRowsItCannotRead() async throws {
        let daemon = try HTTPDaemon(definitions: ["echo": Self.echo])
        try FileManager.default.createDirectory(
            atPath: daemon.harness.folder + "/state", withIntermediateDirectories: true)
        let setup = try daemon.harness.openStore()
        for input in ["one", "two", "three", "four"] {
            try await daemon.harness.submit("echo", input: input, to: setup, nudge: false)
        }
        try await setup.close()
        // Jobs 1 and 2 left running by a jobd that is gone, under one owner
        // written once as TEXT and once as a BLOB; an event of job 3 that is
        // not UTF-8; job 4 with an attempt that is not a number.
        _ = try await daemon.database(
            """
            UPDATE jobs SET state = 'running', lease_owner = 'gone/1/x', claims = 1,
                lease_expires_at = '2000-01-01T00:00:00.000Z', started_at = '2000-01-01T00:00:00.000Z' WHERE id IN (1, 2);
            UPDATE jobs SET lease_owner = CAST('gone/1/x' AS BLOB) WHERE id = 2;
            INSERT INTO events (job_id, kind, message, created_at) VALUES (3, 'note', X'FFFE41', '2026-01-01T00:00:00.000Z');
            UPDATE jobs SET attempt = 'abc' WHERE id = 4;
            """)

        let store = try await daemon.start()
        // The healthy jobs run: job 1 after its lease is requeued, job 3, and a new one.
        #expect(try await daemon.harness.resolved(1, in: store).job.state == .fulfilled, "\(daemon.harness.log)")
        #expect(try await daemon.harness.resolved(3, in: store).job.state == .fulfilled)
        let fresh = try await daemon.jobctlSubmit("echo", input: "five")
        #expect(try await daemon.harness.resolved(fresh, in: store).job.state == .fulfilled)
        // The unreadable ones are set aside, saying which column.
        let quarantined = try await daemon.database("SELECT id, state, error FROM jobs WHERE id IN (2, 4) ORDER BY id")
        #expect(quarantined.map { $0[1] } == ["rejected", "rejected"], "\(quarantined)")
        #expect(quarantined.first?[2].contains("its column lease_owner holds a BLOB") == true, "\(quarantined)")
        #expect(quarantined.last?[2].contains("its column attempt holds the text 'abc'") == true, "\(quarantined)")

        // The pages: an error for the job that cannot be read, the others as usual.
        let page = try await RawHTTP.get("/jobs/3", daemon.endpoint)
        #expect(page.status == 503, "\(page.status)")
        #expect(String(decoding: page.body, as: UTF8.self).contains("its column message holds"))
        for path in ["/", "/jobs/1", "/metrics", "/healthz"] {
            #expect(try await RawHTTP.get(path, daemon.endpoint).status == 200, "\(path)")
        }

        let jobctl = builtProduct("jobctl")
        let status = try await runCommand(jobctl, ["status", "3", "--config", daemon.harness.configPath])
        #expect(status.status == 65, "\(status.error)")
        #expect(status.error.contains("cannot read the events row id "), "\(status.error)")
        let list = try await runCommand(jobctl, ["list", "--config", daemon.harness.configPath])
        #expect(list.status == 65, "\(list.error)")
        #expect(list.error.contains("cannot read the jobs row id 4: its column attempt"), "\(list.error)")
        #expect(list.error.contains("2 job(s) of this page cannot be read (4, 2)"), "\(list.error)")
        #expect(list.output.split(separator: "\n").count == 4, "the header and jobs 5, 3, 1: \(list.output)")
        try await daemon.stop(closing: store)
    }
}
