import BenchmarkSupport
import Foundation

// jobstore-bench — measures the JobStore on this machine and prints each
// figure beside its bound (Thresholds.swift); exits 1 when one misses. With a
// subcommand, it is also the child process that the JobStore tests start
// (crash consistency, multi-process contention, permissions).
//
//   swift run -c release jobstore-bench [--quick] [--big-db PATH] [--big-jobs N] [--skip-big]
//                                       [--only writes,submit,cycle,reads] [--runs N] [--scale X] [--tsv FILE]
//   jobstore-bench crash-writer PATH
//   jobstore-bench contend PATH WORKER JOBS
//   jobstore-bench open PATH
//   jobstore-bench fill PATH JOBS     (a database of JOBS synthetic jobs, for scripts/bench-jobctl)

let arguments = Array(CommandLine.arguments.dropFirst())

switch arguments.first {
case "crash-writer":
    await ChildCommands.crashWriter(path: arguments[1])
case "contend":
    await ChildCommands.contend(path: arguments[1], worker: Int(arguments[2])!, jobs: Int(arguments[3])!)
case "open":
    await ChildCommands.open(path: arguments[1])
case "fill":
    guard arguments.count == 3, let jobs = Int(arguments[2]), jobs > 0 else {
        FileHandle.standardError.write(Data("usage: jobstore-bench fill PATH JOBS\n".utf8))
        exit(2)
    }
    await SyntheticJobs.fill(path: arguments[1], jobs: jobs)
default:
    let benchArguments = BenchArguments(
        usage: "jobstore-bench [--quick] [--big-db PATH] [--big-jobs N] [--skip-big] [--only writes,submit,cycle,reads]"
            + " [--runs N] [--scale X] [--tsv FILE]",
        options: ["big-db", "big-jobs", "runs", "scale", "only"], flags: ["skip-big"])
    var options = Benchmarks.Options()
    options.bigDatabasePath = benchArguments.string("big-db")
    options.bigJobs = benchArguments.int("big-jobs", full: 1_000_000, quick: 100_000)
    options.skipBig = benchArguments.flag("skip-big")
    options.runs = benchArguments.int("runs", full: 3, quick: 1)
    options.scale = benchArguments.string("scale").flatMap(Double.init) ?? (benchArguments.quick ? 0.3 : 1)
    options.only = Set((benchArguments.string("only") ?? "").split(separator: ",").map(String.init))
    var report = Report("jobstore-bench", benchArguments)
    do {
        try await Benchmarks(options: options).run(into: &report)
    } catch {
        FileHandle.standardError.write(Data("jobstore-bench: \(error)\n".utf8))
        exit(1)
    }
    report.finish()
}
