import Foundation
import JobStore
import JobStoreSQLite
import Synchronization

/// Child processes for the JobStore tests. Each prints one line per
/// acknowledged write to stdout, so that the parent knows what must be in
/// the database, whatever happens to the child afterwards.
enum ChildCommands {
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func fail(_ error: any Error) -> Never {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }

    /// Writes as fast as it can until killed: batches of jobs, then stage
    /// results from 64 lanes at once. Prints `job ID` after each committed
    /// submit and `stage ID POSITION` after each acknowledged stage result.
    static func crashWriter(path: String) async {
        do {
            let store = try SQLiteJobStore(path: path)
            let stages = (0..<8).map { StagePlan(name: "s\($0)", kind: "then") }
            while true {
                let batch = (0..<64).map { _ in NewJob(definition: "crash", input: Data("in".utf8), stages: stages) }
                let submitted = try await store.submit(batch)
                for submission in submitted { say("job \(submission.id)") }
                let claimed = try await store.claim(
                    pool: "default", owner: "crash-\(getpid())", limit: 64, leaseDuration: .seconds(600))
                await withTaskGroup(of: Void.self) { group in
                    for job in claimed {
                        group.addTask {
                            for position in 0..<job.stages.count {
                                let value = Data("j\(job.job.id)-p\(position)".utf8)
                                do {
                                    try await store.recordStageResult(
                                        StageResult(lease: job.lease, position: position, outcome: .fulfilled(value)))
                                    say("stage \(job.job.id) \(position)")
                                } catch {
                                    fail(error)
                                }
                            }
                        }
                    }
                }
            }
        } catch {
            fail(error)
        }
    }

    /// One of several processes writing to one database at once: submits
    /// `jobs` jobs one transaction each (every tenth with a shared idempotency
    /// key), claims and finishes jobs, records events. Prints `key K ID` for
    /// each keyed submit and `done N` at the end; any error exits 1.
    static func contend(path: String, worker: Int, jobs: Int) async {
        do {
            let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path, busyTimeout: .seconds(30)))
            let plan = [StagePlan(name: "a", kind: "then"), StagePlan(name: "b", kind: "done")]
            var created = 0
            for index in 0..<jobs {
                let key = index % 10 == 0 ? "shared-\(index / 10)" : nil
                let submission = try await store.submit(
                    NewJob(
                        definition: "contend", input: Data("w\(worker)-\(index)".utf8), idempotencyKey: key,
                        stages: plan))
                if let key { say("key \(key) \(submission.id)") }
                if submission.created { created += 1 }
                if index % 4 == 0 {
                    for job in try await store.claim(
                        pool: "default", owner: "w\(worker)", limit: 2, leaseDuration: .seconds(60))
                    {
                        try await store.recordStageResult(
                            StageResult(lease: job.lease, position: 0, outcome: .fulfilled(Data("x".utf8))))
                        try await store.finish(JobFinish(lease: job.lease, outcome: .fulfilled(Data("done".utf8))))
                        try await store.recordEvent(
                            NewEvent(jobID: job.job.id, kind: "note", message: "finished by w\(worker)"))
                    }
                }
            }
            say("done \(created)")
            try await store.close()
        } catch {
            fail(error)
        }
    }

    /// Opens the database and submits one job; prints `ok ID`, or
    /// `error CODE` and the message on the next line (exit 1).
    static func open(path: String) async {
        do {
            let store = try SQLiteJobStore(path: path)
            let submission = try await store.submit(NewJob(definition: "probe", stages: []))
            say("ok \(submission.id)")
        } catch let error as JobStoreError {
            say("error \(error.code)")
            say(error.message)
            exit(1)
        } catch {
            fail(error)
        }
    }
}
