/// The registry's exposition arranged for its readers: jobd's families in
/// ``MetricFamily/all``'s order (the order docs/operations.md lists them),
/// each declared even before its first sample; other libraries' families
/// after them, by name. The registry itself emits in no stable order.
enum ExpositionText {
    static func arrange(_ emitted: [UInt8]) -> [UInt8] {
        var blocks: [String: [UInt8]] = [:]
        var current = ""
        for line in emitted.split(separator: newline) {
            // A family's lines start at its `# HELP` (or, without help, its `# TYPE`).
            if let name = familyName(declaredBy: line) { current = name }
            blocks[current, default: []] += line + [newline]
        }
        for family in MetricFamily.all where blocks[family.name] == nil {
            blocks[family.name] = Array(family.declaration.utf8)
        }
        let rank = Dictionary(uniqueKeysWithValues: MetricFamily.all.enumerated().map { ($1.name, $0) })
        let names = blocks.keys.sorted { (rank[$0] ?? .max, $0) < (rank[$1] ?? .max, $1) }
        return names.flatMap { blocks[$0] ?? [] }
    }

    /// The `NAME` of a `# HELP NAME …` or `# TYPE NAME …` line.
    static func familyName(declaredBy line: ArraySlice<UInt8>) -> String? {
        for prefix in [help, type] where line.starts(with: prefix) {
            let name = line.dropFirst(prefix.count).prefix { $0 != UInt8(ascii: " ") }
            return String(decoding: name, as: UTF8.self)
        }
        return nil
    }

    private static let newline = UInt8(ascii: "\n")
    private static let help = Array("# HELP ".utf8)
    private static let type = Array("# TYPE ".utf8)
}
