#if canImport(Glibc)
import Glibc
#endif

/// What a benchmark measured, each figure beside its target. Each figure is
/// printed as it is added (and, with `--tsv FILE`, appended to FILE as one
/// row for `scripts/bench`); `finish()` prints them all as one table and
/// exits 1 when any figure missed its target, so a regression fails
/// `make bench` and whatever runs it.
///
///     var report = Report("promises-bench", arguments)
///     report.add("map(on: nil), resolved ÷ raw hop", ratio, unit: "×", .atMost(0.3), note: "30.2 ns")
///     report.finish()
public struct Report: Sendable {
    /// A figure's bound.
    public enum Target: Sendable {
        case atMost(Double)
        case atLeast(Double)
        /// Printed for context, never a miss.
        case none

        func holds(_ value: Double) -> Bool {
            switch self {
            case let .atMost(limit): value <= limit
            case let .atLeast(limit): value >= limit
            case .none: true
            }
        }
    }

    public struct Figure: Sendable {
        public var name: String
        public var value: Double
        public var unit: String
        public var target: Target
        /// Context printed after the verdict: raw figures behind a ratio,
        /// what the target stands for.
        public var note: String
        public var digits: Int
        public var met: Bool { target.holds(value) }

        public var valueText: String { Report.format(value, digits) + Report.spaced(unit) }
        public var targetText: String {
            switch target {
            case let .atMost(limit): "≤ " + Report.format(limit, digits) + Report.spaced(unit)
            case let .atLeast(limit): "≥ " + Report.format(limit, digits) + Report.spaced(unit)
            case .none: ""
            }
        }
        /// `ok`, `MISSED`, or empty for a figure without a target.
        public var verdict: String {
            if case .none = target { return "" }
            return met ? "ok" : "MISSED"
        }
    }

    public let benchmark: String
    public private(set) var figures: [Figure] = []
    private let tsvPath: String?

    /// A report that appends its rows to `arguments.tsvPath` when there is one.
    public init(_ benchmark: String, _ arguments: BenchArguments) {
        self.benchmark = benchmark
        self.tsvPath = arguments.tsvPath
        if let tsvPath { _ = Self.append("", to: tsvPath) }
    }

    public mutating func add(
        _ name: String, _ value: Double, unit: String, _ target: Target = .none, note: String = "", digits: Int = 1
    ) {
        let figure = Figure(name: name, value: value, unit: unit, target: target, note: note, digits: digits)
        figures.append(figure)
        var line = "  \(name): \(figure.valueText)"
        if !figure.targetText.isEmpty { line += "   target \(figure.targetText)   \(figure.verdict)" }
        if !note.isEmpty { line += "   (\(note))" }
        print(line)
        if let tsvPath {
            let fields = [benchmark, name, figure.valueText, figure.targetText, figure.verdict, note]
            let row = fields.map { $0.replacing("\t", with: " ").replacing("\n", with: " ") }.joined(separator: "\t")
            if !Self.append(row + "\n", to: tsvPath) {
                print("\(benchmark): cannot write to \(tsvPath)")
                exit(1)
            }
        }
    }

    public var passed: Bool { figures.allSatisfy(\.met) }

    /// The table: figure, value, target, verdict, note.
    public var table: String {
        let nameWidth = max(6, figures.map(\.name.count).max() ?? 0)
        let valueWidth = max(5, figures.map(\.valueText.count).max() ?? 0)
        let targetWidth = max(6, figures.map(\.targetText.count).max() ?? 0)
        var lines = [
            Self.pad("figure", nameWidth) + "  " + Self.pad("value", valueWidth) + "  "
                + Self.pad("target", targetWidth)
                + "  verdict"
        ]
        for figure in figures {
            var line =
                Self.pad(figure.name, nameWidth) + "  " + Self.pad(figure.valueText, valueWidth) + "  "
                + Self.pad(figure.targetText, targetWidth) + "  " + Self.pad(figure.verdict, 7)
            if !figure.note.isEmpty { line += "  " + figure.note }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// Prints the table and exits: 0 when every target was met, else 1.
    public func finish() -> Never {
        print("\n\(benchmark) (\(Machine.summary))")
        print(table)
        let missed = figures.filter { !$0.met }
        print(
            missed.isEmpty
                ? "\(benchmark): every target met" : "\(benchmark): \(missed.count) figure(s) missed their target")
        exit(missed.isEmpty ? 0 : 1)
    }

    /// `value` with `digits` decimals, thousands grouped: `12,130`, `0.93`.
    public static func format(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled - Double(whole) * scale)
        var digitsText = String(whole)
        var grouped = ""
        while digitsText.count > 3 {
            grouped = "," + digitsText.suffix(3) + grouped
            digitsText.removeLast(3)
        }
        var text = (value < 0 && scaled != 0 ? "-" : "") + digitsText + grouped
        if digits > 0 {
            let decimals = String(fraction)
            text += "." + String(repeating: "0", count: digits - decimals.count) + decimals
        }
        return text
    }

    /// A unit as it follows a number: `12 ms`, but `0.93×` and `88%`.
    static func spaced(_ unit: String) -> String {
        unit.isEmpty || unit == "×" || unit == "%" ? unit : " " + unit
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// Appends `text` to the file at `path`, creating it.
    private static func append(_ text: String, to path: String) -> Bool {
        guard let file = fopen(path, "a") else { return false }
        defer { fclose(file) }
        return fputs(text, file) >= 0
    }
}
