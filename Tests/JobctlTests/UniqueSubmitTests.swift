import Foundation
import JobStore
import Testing

/// `jobctl submit` of a definition with `unique:`: a duplicate prints the
/// id of the job holding the key, and says so on stderr and in --json.
@Suite struct UniqueSubmitTests {
    static let unique = """
        unique: { key: {json: .order}, on-conflict: replace-input }
        pipeline:
          - then: work
            run: [cat]
        """

    @Test func aDuplicatePrintsTheHoldersIdAndSaysSo() async throws {
        let sandbox = try Sandbox(definitions: ["order": Self.unique])
        let first = try await sandbox.jobctl(["submit", "order", "--input", #"{"order": 7, "v": 1}"#])
        #expect(first.status == 0, "\(first)")
        let id = try #require(Int64(first.out.trimmingCharacters(in: .newlines)), "\(first)")
        #expect(!first.stderr.contains("duplicate"))

        let again = try await sandbox.jobctl(["submit", "order", "--input", #"{"order": 7, "v": 2}"#])
        #expect(again.status == 0 && again.out == "\(id)\n", "\(again)")
        #expect(
            again.errLines == [
                "jobctl: job \(id) is a duplicate: it holds the unique key \"7\" of order; "
                    + "its input was replaced if it was still pending"
            ])
        #expect(try await sandbox.job(id).job.input == Data(#"{"order": 7, "v": 2}"#.utf8))

        let json = try await sandbox.jobctl(["submit", "order", "--input", #"{"order": 7}"#, "--json"]).json()
        #expect(json["id"] as? Int == Int(id) && json["created"] as? Bool == false)
        #expect(json["duplicate"] as? Bool == true)

        let batch = try await sandbox.jobctl(
            ["submit", "order", "--batch", "-", "--json"], stdin: Data("{\"order\": 8}\n{\"order\": 7}\n".utf8))
        let jobs = try #require(try batch.json()["jobs"] as? [[String: Any]], "\(batch)")
        #expect(jobs.map { $0["duplicate"] as? Bool } == [false, true])
        #expect(jobs[1]["id"] as? Int == Int(id))
        #expect(batch.stderr.contains("line 2: job \(id) is a duplicate"), "\(batch.stderr)")
        #expect(try await sandbox.jobCount() == 2)
    }
}
