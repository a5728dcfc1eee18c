/// A rate measured once per round, its rounds interleaved with those of the
/// other series (a baseline and the code under test), so that load from
/// elsewhere hits each alike; the median of its rounds is its figure.
public struct Series {
    public let name: String
    /// The unit of what `measure` returns: `runs/s`.
    public let unit: String
    private let measure: () -> Double
    public private(set) var values: [Double] = []

    public init(_ name: String, unit: String, _ measure: @escaping () -> Double) {
        self.name = name
        self.unit = unit
        self.measure = measure
    }

    public var median: Double { BenchmarkSupport.median(values) }

    /// `rounds 622, 692, 585`.
    public var roundsText: String { "rounds " + values.map { Report.format($0, 0) }.joined(separator: ", ") }

    /// `rounds` rounds, each measuring every series once, in order.
    public static func measure(_ series: inout [Series], rounds: Int) {
        for _ in 0..<rounds {
            for index in series.indices { series[index].values.append(series[index].measure()) }
        }
    }
}

extension Report {
    /// A baseline's median, for context.
    public mutating func add(baseline: Series, prefix: String = "", note: String = "") {
        add(prefix + baseline.name, baseline.median, unit: baseline.unit, note: baseline.roundsText + note, digits: 0)
    }

    /// `series`' median as a percentage of `baseline`'s, held to `atLeast`
    /// when given; the rate itself and the rounds go in the note.
    public mutating func add(
        _ series: Series, shareOf baseline: Series, atLeast: Double?, prefix: String = "", note: String = ""
    ) {
        let rate = series.median
        add(
            "\(prefix)\(series.name) ÷ \(baseline.name)", rate / baseline.median * 100, unit: "%",
            atLeast.map { .atLeast($0) } ?? .none,
            note: "\(Report.format(rate, 0)) \(series.unit)\(note); \(series.roundsText)", digits: 0)
    }
}
