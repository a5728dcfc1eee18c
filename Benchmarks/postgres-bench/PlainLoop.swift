import Foundation
import Spawn

/// The plain loop: pgbench, 16 clients, each transaction claiming one job
/// with SKIP LOCKED, writing its three stages and finishing it, until every
/// job of schema `plain` is done (each client runs jobs/16 transactions).
/// Gives pgbench's transactions (jobs) per second.
func plainLoop(pgbench: String, socket: String, port: Int, jobs: Int) throws -> Double {
    let script = """
        BEGIN;
        WITH picked AS (SELECT id FROM plain.jobs WHERE state = 'pending' AND pool = 'default' AND run_at <= now()
                        ORDER BY priority DESC, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        UPDATE plain.jobs SET state = 'running', lease_owner = 'pgbench', lease_expires_at = now() + interval '30 s',
            claims = claims + 1, started_at = now()
        FROM picked WHERE jobs.id = picked.id RETURNING jobs.id AS job \\gset
        UPDATE plain.stages SET state = 'fulfilled', value = 'value 0', attempts = 1, finished_at = now() WHERE job_id = :job AND position = 0;
        UPDATE plain.stages SET state = 'fulfilled', value = 'value 1', attempts = 1, finished_at = now() WHERE job_id = :job AND position = 1;
        UPDATE plain.stages SET state = 'fulfilled', value = 'value 2', attempts = 1, finished_at = now() WHERE job_id = :job AND position = 2;
        UPDATE plain.jobs SET state = 'fulfilled', result = 'value 2', finished_at = now(), lease_expires_at = NULL WHERE id = :job;
        COMMIT;

        """
    let file = NSTemporaryDirectory() + "postgres-bench-\(getpid()).sql"
    try script.write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let output = NSTemporaryDirectory() + "postgres-bench-\(getpid()).out"
    defer { try? FileManager.default.removeItem(atPath: output) }
    let termination = try SpawnedProcess(
        pgbench,
        [
            "-n", "-h", socket, "-p", "\(port)", "-U", "postgres", "-c", "16", "-j", "2", "-t", "\(jobs / 16)", "-f",
            file,
            "postgres",
        ],
        stdout: .file(output), stderr: .sameAsStdout
    ).wait()
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    guard termination == .exited(0),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
        let tps = Double(line.dropFirst(6).prefix { $0 != " " })
    else { throw BenchError("pgbench failed: \(text)") }
    return tps
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
