#if canImport(Glibc)
import Glibc
#endif

/// The command line every benchmark takes: `--quick` (fewer rounds and
/// jobs, for `make bench`), `--tsv FILE` (the report's rows, for
/// `scripts/bench`), and its own `--name VALUE` options. Anything else
/// prints the usage and exits 2.
public struct BenchArguments: Sendable {
    /// Fewer rounds and jobs: the figures are noisier, the targets the same.
    public let quick: Bool
    /// Where the report appends its rows.
    public let tsvPath: String?
    private let values: [String: String]
    private let usage: String

    /// - Parameters:
    ///   - options: the benchmark's own options that take a value (`jobs` for `--jobs N`).
    ///   - flags: its own options without a value.
    public init(
        usage: String, options: [String] = [], flags: [String] = [],
        arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) {
        self.usage = usage
        var quick = false
        var tsvPath: String?
        var values: [String: String] = [:]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let name = argument.hasPrefix("--") ? String(argument.dropFirst(2)) : ""
            switch name {
            case "quick": quick = true
            case "tsv":
                guard let path = rest.popFirst() else { Self.fail(usage, "--tsv needs a file") }
                tsvPath = path
            case "help":
                print("usage: \(usage)")
                exit(0)
            case _ where flags.contains(name): values[name] = ""
            case _ where options.contains(name):
                guard let value = rest.popFirst() else { Self.fail(usage, "\(argument) needs a value") }
                values[name] = value
            default: Self.fail(usage, "unknown argument \(argument)")
            }
        }
        self.quick = quick
        self.tsvPath = tsvPath
        self.values = values
    }

    /// `--name N` if given, else `quick` in quick mode and `full` otherwise.
    public func int(_ name: String, full: Int, quick: Int? = nil) -> Int {
        guard let text = values[name] else { return self.quick ? quick ?? full : full }
        guard let value = Int(text), value > 0 else { Self.fail(usage, "--\(name) takes a positive whole number") }
        return value
    }

    public func string(_ name: String) -> String? { values[name] }

    public func flag(_ name: String) -> Bool { values[name] != nil }

    private static func fail(_ usage: String, _ problem: String) -> Never {
        let text = "\(problem)\nusage: \(usage)\n"
        _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        exit(2)
    }
}
