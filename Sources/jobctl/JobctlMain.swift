import ArgumentParser
import Foundation

/// Parses the command line, runs the command, and turns every failure into
/// one line on stderr and an exit status (see ``ExitStatus``).
@main
enum JobctlMain {
    static func main() async {
        let console = Console.current()
        let command: any ParsableCommand
        do {
            command = try Jobctl.parseAsRoot(Array(CommandLine.arguments.dropFirst()))
        } catch {
            // Help, --version and completion scripts are "errors" that exit 0.
            guard Jobctl.exitCode(for: error) != .success else { Jobctl.exit(withError: error) }
            let message = Jobctl.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            console.note("error: \(message) (see jobctl help)")
            exit(Jobctl.exitCode(for: error).rawValue)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let failure as JobctlError {
            console.note("error: \(failure.message)")
            if !failure.details.isEmpty {
                console.err(failure.details.joined(separator: "\n") + "\n")
            }
            exit(failure.exitStatus.code)
        } catch {
            // CleanExit (`jobctl` alone prints help) and anything unexpected.
            Jobctl.exit(withError: error)
        }
        exit(ExitStatus.ok.code)
    }
}
