/// Aligned columns for human output: a header, rows, two spaces between
/// columns, numbers aligned right. Widths count characters of the plain
/// text, so colour codes never shift a column.
struct Table {
    struct Cell {
        var text: String
        var color: Console.Color?

        init(_ text: String, _ color: Console.Color? = nil) {
            self.text = text
            self.color = color
        }
    }

    enum Alignment {
        case left, right
    }

    var headers: [String]
    var alignments: [Alignment]
    var rows: [[Cell]] = []
    /// Whether the first line names the columns.
    var showsHeader = true

    init(_ headers: [String], alignments: [Alignment]? = nil) {
        self.headers = headers
        self.alignments = alignments ?? headers.map { _ in .left }
    }

    mutating func add(_ cells: [Cell]) {
        rows.append(cells)
    }

    /// The width of each column: its widest cell or header.
    var widths: [Int] {
        headers.indices.map { column in
            rows.reduce(headers[column].count) { widest, row in
                column < row.count ? max(widest, row[column].text.count) : widest
            }
        }
    }

    /// The table as lines ending in newlines; the last column is not padded,
    /// so no line carries trailing spaces.
    func render(_ console: Console, indent: String = "") -> String {
        let widths = widths
        var output = ""
        func line(_ cells: [Cell]) {
            var text = indent
            for (column, cell) in cells.enumerated() where column < widths.count {
                let last = column == cells.count - 1
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.text.count))
                let painted = console.paint(cell.text, cell.color)
                switch alignments[column] {
                case .right: text += padding + painted
                case .left: text += last ? painted : painted + padding
                }
                if !last { text += "  " }
            }
            // An empty last cell leaves the padding of the one before it.
            while text.hasSuffix(" ") { text.removeLast() }
            output += text + "\n"
        }
        if showsHeader { line(headers.map { Cell($0, .bold) }) }
        rows.forEach(line)
        return output
    }
}
