import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

/// Rows written by hand with sqlite3, read by `status` and `list`: names
/// escaped for the terminal as values are, and a row jobctl cannot read
/// named in an error (exit 65) while the rest is shown.
@Suite struct HandWrittenRowTests {
    /// An OSC that retitles the window, then a clear-screen CSI.
    static let hostile = "'x' || char(27) || ']0;PWNED' || char(7) || char(27) || '[2J'"
    static let escaped = "x\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J"

    @Test func namesFromTheDatabaseAreEscaped() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.running)
        try await sandbox.withStore { store in
            try await store.executeInWriteTransaction(
                """
                UPDATE jobs SET definition = \(Self.hostile), pool = \(Self.hostile), idempotency_key = \(Self.hostile),
                    lease_owner = \(Self.hostile) WHERE id = \(id);
                UPDATE stages SET name = \(Self.hostile), kind = \(Self.hostile) WHERE job_id = \(id);
                INSERT INTO events (job_id, kind, message, created_at)
                    VALUES (\(id), \(Self.hostile), 'm', '2026-01-01T00:00:00.000Z');
                """)
        }
        for arguments in [["status", String(id)], ["list"]] {
            let result = try await sandbox.jobctl(arguments)
            #expect(result.status == 0, "\(result)")
            #expect(!result.stdout.contains(0x1B) && !result.stdout.contains(0x07), "\(result)")
            #expect(result.out.contains(Self.escaped), "\(result)")
        }
    }

    @Test func statusOfARowThatCannotBeReadNamesItsColumn() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.fulfilled)
        try await sandbox.withStore { store in
            try await store.executeInWriteTransaction(
                """
                INSERT INTO events (job_id, kind, message, created_at)
                    VALUES (\(id), 'note', X'FFFE41', '2026-01-01T00:00:00.000Z')
                """)
        }
        let result = try await sandbox.jobctl(["status", String(id)])
        #expect(result.status == 65, "\(result)")
        #expect(result.out.isEmpty)
        #expect(result.stderr.hasPrefix("jobctl: error: cannot read the events row id "), "\(result)")
        #expect(result.stderr.contains("its column message holds a BLOB of 3 bytes (X'FFFE41')"), "\(result)")

        let json = try await sandbox.jobctl(["status", String(id), "--json"])
        #expect(json.status == 65, "\(json)")
        #expect((try json.json()["error"] as? [String: Any])?["code"] as? String == "bad-row", "\(json)")
    }

    @Test func listShowsTheReadableRowsAndNamesTheOthers() async throws {
        let sandbox = try Sandbox()
        let good = try await sandbox.seed(.fulfilled)
        let bad = try await sandbox.seed(.fulfilled)
        try await sandbox.withStore { store in
            try await store.executeInWriteTransaction("UPDATE jobs SET attempt = 'two' || char(27) WHERE id = \(bad)")
        }
        let result = try await sandbox.jobctl(["list"])
        #expect(result.status == 65, "\(result)")
        let ids = result.outLines.dropFirst().map { $0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " } }
        #expect(ids == ["\(good)"], "\(result)")
        #expect(
            result.errLines.first == "jobctl: warning: cannot read the jobs row id \(bad): its column attempt holds "
                + "the text 'two\\u{1b}' where jobd reads an integer within 0…2147483647; the row was written by something "
                + "other than jobd: correct or delete it (see \"Rows written by hand\" in docs/schema.md)", "\(result)")
        #expect(result.errLines.last?.hasPrefix("jobctl: error: 1 job(s) of this page cannot be read (\(bad))") == true)

        let json = try await sandbox.jobctl(["list", "--json"])
        #expect(json.status == 65, "\(json)")
        let object = try json.json()
        #expect((object["jobs"] as? [[String: Any]])?.map { $0["id"] as? Int } == [Int(good)])
        #expect((object["unreadable"] as? [[String: Any]])?.first?["id"] as? Int == Int(bad))
    }
}
