import Foundation

// jobstore-bench — measures the JobStore on this machine and prints each
// figure beside its target. With a subcommand, it is also the child process
// that the JobStore tests start (crash consistency, multi-process contention,
// permissions).
//
//   swift run -c release jobstore-bench [--big-db PATH] [--skip-big] [--only writes,submit,cycle,reads] [--runs N]
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
case "-h", "--help":
    print("usage: jobstore-bench [--big-db PATH] [--skip-big] [--only writes,submit,cycle,reads] [--runs N]")
default:
    var options = Benchmarks.Options()
    var index = 0
    while index < arguments.count {
        switch arguments[index] {
        case "--big-db":
            index += 1
            options.bigDatabasePath = arguments[index]
        case "--skip-big":
            options.skipBig = true
        case "--runs":
            index += 1
            options.runs = Int(arguments[index]) ?? 3
        case "--scale":
            index += 1
            options.scale = Double(arguments[index]) ?? 1
        case "--only":
            index += 1
            options.only.formUnion(arguments[index].split(separator: ",").map(String.init))
        default:
            FileHandle.standardError.write(Data("jobstore-bench: unknown option \(arguments[index])\n".utf8))
            exit(2)
        }
        index += 1
    }
    do {
        let allMet = try await Benchmarks(options: options).run()
        exit(allMet ? 0 : 1)
    } catch {
        FileHandle.standardError.write(Data("jobstore-bench: \(error)\n".utf8))
        exit(1)
    }
}
