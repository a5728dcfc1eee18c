import Foundation
import JobStore

/// Jobs resolved per minute over the last hour: 60 stacked bars
/// (fulfilled, cancelled, rejected), as inline SVG.
enum ResolvedChart {
    static let width = 360.0, height = 130.0
    static let left = 30.0, bottom = 18.0, top = 8.0

    /// The hour the chart covers: the 60 minutes ending with the current one.
    static func window(now: Date) -> (start: Date, end: Date) {
        let minute = (now.timeIntervalSince1970 / 60).rounded(.down) * 60
        let end = Date(timeIntervalSince1970: minute + 60)
        return (end.addingTimeInterval(-3600), end)
    }

    static func render(_ minutes: [ResolvedMinute], now: Date) -> HTML {
        let (start, _) = window(now: now)
        var perMinute = Array(repeating: [JobState: Int](), count: 60)
        for entry in minutes {
            let index = Int((entry.minute.timeIntervalSince(start) / 60).rounded(.down))
            guard (0..<60).contains(index) else { continue }
            perMinute[index][entry.state, default: 0] += entry.count
        }
        let totals = perMinute.map { $0.values.reduce(0, +) }
        let peak = niceCeiling(totals.max() ?? 0)
        let plotWidth = width - left - 4
        let plotHeight = height - top - bottom
        let slot = plotWidth / 60
        var svg: HTML = """
            <svg class="chart" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" \
            aria-label="Jobs resolved per minute over the last hour">
            """
        for step in 0...2 {
            let value = peak * step / 2
            let y = top + plotHeight - plotHeight * Double(step) / 2
            svg += """
                <line class="grid" x1="\(left, digits: 1)" x2="\(width - 4, digits: 1)" y1="\(y, digits: 1)" \
                y2="\(y, digits: 1)"/><text x="\(left - 5, digits: 1)" y="\(y + 4, digits: 1)" \
                text-anchor="end">\(value)</text>
                """
        }
        for (index, counts) in perMinute.enumerated() where totals[index] > 0 {
            var y = top + plotHeight
            let minute = start.addingTimeInterval(Double(index) * 60)
            let label = [JobState.fulfilled, .cancelled, .rejected].compactMap { state in
                counts[state].map { "\($0) \(state.rawValue)" }
            }.joined(separator: ", ")
            svg += "<g><title>\(DisplayTime.clock(minute)) UTC: \(label)</title>"
            for state in [JobState.fulfilled, .cancelled, .rejected] {
                guard let count = counts[state], count > 0 else { continue }
                let barHeight = plotHeight * Double(count) / Double(peak)
                y -= barHeight
                svg += """
                    <rect class="s-\(state.rawValue)" x="\(left + Double(index) * slot + 0.5, digits: 1)" \
                    y="\(y, digits: 1)" width="\(max(1, slot - 1.5), digits: 1)" height="\(barHeight, digits: 1)"/>
                    """
            }
            svg += "</g>"
        }
        for mark in stride(from: 0, through: 60, by: 15) {
            let x = left + Double(mark) * slot
            let anchor = mark == 0 ? "start" : mark == 60 ? "end" : "middle"
            svg += """
                <text x="\(x, digits: 1)" y="\(height - 5, digits: 1)" text-anchor="\(HTML(rendered: anchor))">\
                \(DisplayTime.clock(start.addingTimeInterval(Double(mark) * 60)))</text>
                """
        }
        if totals.allSatisfy({ $0 == 0 }) {
            svg += """
                <text x="\(left + plotWidth / 2, digits: 1)" y="\(top + plotHeight / 2, digits: 1)" \
                text-anchor="middle">no job resolved in the last hour</text>
                """
        }
        return svg + "</svg>"
    }

    /// The smallest of 2, 4, 6, 10 × 10ⁿ at or above `value`: even, so the
    /// grid's middle line is a whole number.
    static func niceCeiling(_ value: Int) -> Int {
        var scale = 1
        while true {
            for step in [2, 4, 6, 10] where step * scale >= value {
                return step * scale
            }
            scale *= 10
        }
    }
}
