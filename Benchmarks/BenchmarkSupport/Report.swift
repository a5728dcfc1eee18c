#if canImport(Glibc)
import Glibc
#endif

/// What a benchmark measured, each figure beside its target, printed as one
/// table; the process exits 1 when any figure misses its target, so a
/// regression fails `make bench` (and whatever runs it).
///
///     var report = Report("promises-bench")
///     report.add("map(on: nil), resolved", 11.2, unit: "ns", .atMost(0.3 * hop), note: "0.05× a raw hop")
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
        /// What the target stands for (`≤ 0.3× a raw hop`), printed beside it.
        public var note: String
        public var digits: Int
        public var met: Bool { target.holds(value) }
    }

    public let benchmark: String
    public private(set) var figures: [Figure] = []

    public init(_ benchmark: String) {
        self.benchmark = benchmark
    }

    public mutating func add(
        _ name: String, _ value: Double, unit: String, _ target: Target = .none, note: String = "", digits: Int = 1
    ) {
        figures.append(Figure(name: name, value: value, unit: unit, target: target, note: note, digits: digits))
    }

    public var passed: Bool { figures.allSatisfy(\.met) }

    /// The table: figure, value, target, verdict.
    public var table: String {
        let nameWidth = max(6, figures.map(\.name.count).max() ?? 0)
        var lines = ["\(benchmark)", pad("figure", nameWidth) + "  " + pad("value", 16) + "  target"]
        for figure in figures {
            let value = Self.format(figure.value, figure.digits) + " " + figure.unit
            let target: String
            switch figure.target {
            case let .atMost(limit): target = "≤ " + Self.format(limit, figure.digits) + " " + figure.unit
            case let .atLeast(limit): target = "≥ " + Self.format(limit, figure.digits) + " " + figure.unit
            case .none: target = ""
            }
            let verdict = if case .none = figure.target { "" } else { figure.met ? "ok" : "MISSED" }
            let note = figure.note.isEmpty ? "" : "  (\(figure.note))"
            lines.append(pad(figure.name, nameWidth) + "  " + pad(value, 16) + "  " + pad(target, 18) + verdict + note)
        }
        return lines.joined(separator: "\n")
    }

    /// Prints the table and exits: 0 when every target was met, else 1.
    public func finish() -> Never {
        print(table)
        let missed = figures.filter { !$0.met }
        if !missed.isEmpty { print("\(benchmark): \(missed.count) figure(s) missed their target") }
        exit(missed.isEmpty ? 0 : 1)
    }

    static func format(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if digits == 0 { return "\(Int(rounded))" }
        let text = "\(rounded)"
        guard let dot = text.firstIndex(of: ".") else { return text }
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        return decimals >= digits ? text : text + String(repeating: "0", count: digits - decimals)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
