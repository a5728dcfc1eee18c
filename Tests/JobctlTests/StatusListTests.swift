import Foundation
import JobConfig
import JobControl
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

/// `jobctl status` and `jobctl list`, read while no jobd runs.
@Suite struct StatusListTests {
    @Test func statusShowsEveryStageWithValuesWholeOffATerminal() async throws {
        let sandbox = try Sandbox()
        let long = String(repeating: "abcdefghij", count: 30)
        let id = try await sandbox.seed(.fulfilled, input: "line one\nline two", result: long)

        let result = try await sandbox.jobctl(["status", String(id)])
        #expect(result.status == 0, "\(result)")
        let lines = result.outLines
        #expect(lines.first == "job \(id)  hello  fulfilled  attempt 1")
        #expect(result.out.contains("input     line one\\nline two"), "newlines shown escaped on one line")
        #expect(result.out.contains("result    \(long)"), "whole when stdout is not a terminal")
        let header = try #require(lines.first { $0.contains("STAGE") })
        #expect(header == "  #  STAGE    KIND  STATE      TRIES  TOOK  VALUE / ERROR")
        let rows = lines.drop { !$0.contains("STAGE") }.dropFirst().prefix(3).map { $0 }
        #expect(rows.count == 3)
        #expect(rows[0].hasPrefix("  1  fetch    then  fulfilled      1  1."), "\(rows[0])")
        #expect(rows[0].hasSuffix("fetched \(id)"))
        #expect(rows[1].contains("  2  total    map   fulfilled") && rows[1].hasSuffix("42\\n"))
        #expect(rows[2].hasSuffix(long))
        // Columns line up: every row's state starts where the header's does.
        let column = try #require(header.range(of: "STATE")).lowerBound.utf16Offset(in: header)
        for row in rows { #expect(row.dropFirst(column).hasPrefix("fulfilled"), "\(row)") }
    }

    @Test func statusOfARejectedJobShowsTheErrorAndExitCode() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.rejected, error: "exit status 3: total is not a number")
        let result = try await sandbox.jobctl(["status", String(id)])
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("error     exit status 3: total is not a number"))
        let row = try #require(result.outLines.first { $0.hasPrefix("  2  total ") })
        #expect(row.contains("rejected       2"), "\(row)")
        #expect(row.hasSuffix("  exit status 3: total is not a number"))
        let skipped = try #require(result.outLines.first { $0.hasPrefix("  3  publish ") })
        #expect(skipped.contains("skipped"))
    }

    @Test func statusJSONHasTheContractFields() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.fulfilled, result: "done")
        let result = try await sandbox.jobctl(["status", String(id), "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        for key in [
            "id", "definition", "state", "attempt", "input", "result", "error", "created_at", "started_at",
            "finished_at", "scheduled_for", "stages",
        ] {
            #expect(json.keys.contains(key), "missing \(key)")
        }
        #expect(json["scheduled_for"] is NSNull, "a submitted job has no occurrence")
        #expect(json["id"] as? Int == Int(id))
        #expect(json["state"] as? String == "fulfilled")
        #expect(json["result"] as? String == "done")
        #expect(json["error"] is NSNull)
        let created = try #require(json["created_at"] as? String)
        #expect(created.count == 24 && created.hasSuffix("Z"), "\(created)")
        let stages = try #require(json["stages"] as? [[String: Any]])
        #expect(stages.map { $0["name"] as? String } == ["fetch", "total", "publish"])
        for key in [
            "position", "name", "kind", "state", "attempts", "value", "error", "exit_code", "error_code",
            "started_at", "finished_at",
        ] {
            #expect(stages.allSatisfy { $0.keys.contains(key) }, "a stage misses \(key)")
        }
        #expect(stages[1]["value"] as? String == "42\n")
        #expect(stages[0]["exit_code"] as? Int == 0)
        #expect(stages[1]["exit_code"] is NSNull)
    }

    /// A job that ended before it started by the wall clock (it was
    /// stepped back meanwhile) took 0 ms, in the text and in JSON alike.
    @Test func aDurationAcrossAClockStepBackIsZeroNotNegative() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.fulfilled)
        try await sandbox.withStore { store in
            try await store.executeInWriteTransaction(
                """
                UPDATE jobs SET started_at = '2026-11-26T12:00:00.000Z', finished_at = '2026-11-26T11:00:10.000Z' WHERE id = \(id);
                UPDATE stages SET started_at = '2026-11-26T12:00:00.000Z', finished_at = '2026-11-26T11:00:10.000Z' WHERE job_id = \(id);
                """)
        }
        let json = try await sandbox.jobctl(["status", String(id), "--json"]).json()
        #expect(json["duration_ms"] as? Int == 0)
        let stages = try #require(json["stages"] as? [[String: Any]])
        #expect(stages.allSatisfy { $0["duration_ms"] as? Int == 0 }, "\(stages)")
    }

    @Test func bytesThatAreNotTextComeAsBase64() async throws {
        let sandbox = try Sandbox()
        let bytes = Data([0xFF, 0x00, 0x01])
        let id = try await sandbox.withStore {
            try await $0.submit(NewJob(definition: "hello", input: bytes, stages: JobSeeder.stages)).id
        }
        let json = try await sandbox.jobctl(["status", String(id), "--json"]).json()
        let input = try #require(json["input"] as? [String: Any])
        #expect(input["base64"] as? String == bytes.base64EncodedString())
        let text = try await sandbox.jobctl(["status", String(id)])
        #expect(text.out.contains("<3 bytes, not UTF-8 text; see --json>"))
    }

    @Test func listFiltersNewestFirst() async throws {
        let sandbox = try Sandbox()
        var ids: [JobState: [Int64]] = [:]
        for (state, definition) in [
            (JobState.pending, "hello"), (.running, "hello"), (.fulfilled, "hello"),
            (.rejected, "failing"), (.cancelled, "hello"), (.pending, "failing"),
            (.fulfilled, "failing"),
        ] {
            ids[state, default: []].append(try await sandbox.seed(state, definition: definition))
        }
        func listed(_ arguments: [String]) async throws -> [Int64] {
            let result = try await sandbox.jobctl(["list"] + arguments)
            #expect(result.status == 0, "\(result)")
            return result.outLines.dropFirst().compactMap { Int64($0.split(separator: " ").first ?? "") }
        }
        let all = ids.values.flatMap { $0 }.sorted(by: >)
        #expect(try await listed([]) == all)
        #expect(try await listed(["--pending"]) == (ids[.pending]! + ids[.running]!).sorted(by: >))
        #expect(
            try await listed(["--resolved"]) == (ids[.fulfilled]! + ids[.rejected]! + ids[.cancelled]!).sorted(by: >))
        #expect(
            try await listed(["--state", "rejected", "--state", "cancelled"])
                == (ids[.rejected]! + ids[.cancelled]!).sorted(by: >))
        #expect(try await listed(["--definition", "failing"]).count == 3)
        #expect(try await listed(["--resolved", "--definition", "failing"]).count == 2)
        #expect(try await listed(["--limit", "2"]) == Array(all.prefix(2)))
        #expect(try await listed(["--limit", "2", "--before", String(all[1])]) == Array(all[2..<4]))
    }

    /// list takes the filters of the bulk actions: --key, --since, --until,
    /// also on a parent's children.
    @Test func listFiltersByKeyAndCreationTime() async throws {
        let sandbox = try Sandbox()
        let (parent, children) = try await ChildrenStatusTests.seedFamily(sandbox)
        let keyed = try await sandbox.withStore { store in
            try await store.submit(
                NewJob(
                    definition: "hello", idempotencyKey: "invoice-7", stages: [StagePlan(name: "work", kind: "then")])
            ).id
        }
        func listed(_ arguments: [String]) async throws -> [Int64] {
            let result = try await sandbox.jobctl(["list"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result)")
            return result.outLines.dropFirst().compactMap { Int64($0.split(separator: " ").first ?? "") }
        }
        #expect(try await listed(["--key", "invoice-7"]) == [keyed])
        #expect(try await listed(["--since", "1h"]).count == children.count + 2)
        #expect(try await listed(["--since", "2999-01-01T00:00:00Z"]).isEmpty)
        #expect(try await listed(["--until", "1h"]).isEmpty)
        #expect(try await listed(["--parent", String(parent), "--since", "1h"]) == children)
        #expect(try await listed(["--parent", String(parent), "--until", "1h"]).isEmpty)
        let bad = try await sandbox.jobctl(["list", "--since", "yesterday"])
        #expect(bad.status == 64 && bad.stderr.contains("invalid --since \"yesterday\""), "\(bad)")
    }

    @Test func listPagesAndSaysHowToGoOn() async throws {
        let sandbox = try Sandbox()
        for _ in 0..<5 { _ = try await sandbox.seed(.pending) }
        let first = try await sandbox.jobctl(["list", "--limit", "3"])
        #expect(first.outLines.count == 4, "\(first)")
        #expect(first.errLines == ["jobctl: more: add --before 3 for the next page"])
        let json = try await sandbox.jobctl(["list", "--limit", "3", "--json"]).json()
        #expect(json["next_before"] as? Int == 3)
        let jobs = try #require(json["jobs"] as? [[String: Any]])
        #expect(jobs.map { $0["id"] as? Int } == [5, 4, 3])
        #expect(jobs.allSatisfy { $0["stages"] == nil })
        let last = try await sandbox.jobctl(["list", "--limit", "3", "--before", "3", "--json"]).json()
        #expect(last["next_before"] is NSNull)
        #expect((last["jobs"] as? [[String: Any]])?.count == 2)
    }

    /// Only jobd creates the database: a command run before jobd ever
    /// started (or after the file was removed) says so and creates nothing.
    @Test(arguments: [["list"], ["status", "1"], ["submit", "hello", "--input", "x"], ["cancel", "1"]])
    func aMissingDatabaseIsAnErrorAndIsNotCreated(arguments: [String]) async throws {
        let sandbox = try Sandbox(createDatabase: false)
        let result = try await sandbox.jobctl(arguments)
        #expect(result.status == 74, "\(result)")
        #expect(
            result.errLines == [
                "jobctl: error: the job database \(sandbox.databasePath) does not exist: jobd creates it when it first starts. Start jobd, or check 'database' in jobd.yaml"
            ], "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.databasePath))
    }
}
