import Foundation
import JobStore

/// A job's stages as a timeline: one bar per stage and job attempt, from
/// the stage's start for its duration, on one time axis, as inline SVG.
/// A running stage's bar ends at `now`; a stage that never started has no
/// bar, only its state.
enum StageTimeline {
    /// One job attempt's stages.
    struct Attempt {
        var number: Int
        var isCurrent: Bool
        var stages: [Stage]
    }

    static let width = 760.0, labelWidth = 190.0, rowHeight = 22.0, axisHeight = 22.0

    static func render(_ attempts: [Attempt], now: Date) -> HTML {
        let ran = attempts.flatMap(\.stages).filter { $0.startedAt != nil && $0.state != .skipped }
        guard let origin = ran.compactMap(\.startedAt).min() else {
            return "<p class=\"none\">No stage has started yet.</p>"
        }
        let ends = ran.map { $0.finishedAt ?? now }
        let span = max(0.001, (ends.max() ?? origin).timeIntervalSince(origin))
        // Room right of the plot for the last bar's label (`12.5 s ×400`).
        let plot = width - labelWidth - 96
        let showAttempts = attempts.count > 1
        let rowCount = attempts.reduce(0) { $0 + $1.stages.count + (showAttempts ? 1 : 0) }
        let height = Double(rowCount) * rowHeight + axisHeight + 4
        var svg: HTML = """
            <div class="scroll"><svg class="timeline" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" \
            aria-label="Stages on a time axis">
            """
        var y = 2.0
        for attempt in attempts {
            if showAttempts {
                let title = attempt.isCurrent ? "attempt \(attempt.number) (current)" : "attempt \(attempt.number)"
                svg += "<text x=\"0\" y=\"\(y + 15, digits: 1)\" font-weight=\"600\">\(plain: title, limit: 60)</text>"
                y += rowHeight
            }
            for stage in attempt.stages {
                svg += row(stage, y: y, origin: origin, span: span, plot: plot, now: now)
                y += rowHeight
            }
        }
        for tick in 0...4 {
            let x = labelWidth + plot * Double(tick) / 4
            let anchor: HTML = tick == 0 ? "start" : tick == 4 ? "end" : "middle"
            svg += """
                <line class="grid" x1="\(x, digits: 1)" x2="\(x, digits: 1)" y1="0" y2="\(y, digits: 1)"/>\
                <text x="\(x, digits: 1)" y="\(y + 15, digits: 1)" text-anchor="\(anchor)">\
                +\(DisplayTime.duration(span * Double(tick) / 4))</text>
                """
        }
        return svg + "</svg></div>"
    }

    private static func row(_ stage: Stage, y: Double, origin: Date, span: Double, plot: Double, now: Date) -> HTML {
        // In an SVG of its own, as wide as the label column: a long name is clipped there, not drawn under the bars.
        let label: HTML = """
            <svg y="\(y, digits: 1)" width="\(labelWidth - 6, digits: 1)" height="\(rowHeight, digits: 1)">\
            <text x="0" y="15">\(stage.position) \(plain: stage.name, limit: 24)</text></svg>
            """
        // A skipped stage did not run, even if a time was recorded for it.
        guard let start = stage.startedAt, stage.state != .skipped else {
            return label + """
                <text x="\(labelWidth, digits: 1)" y="\(y + 15, digits: 1)" font-style="italic">\(stage.state.rawValue)</text>
                """
        }
        let end = stage.finishedAt ?? now
        let seconds = max(0, end.timeIntervalSince(start))
        let x = labelWidth + plot * start.timeIntervalSince(origin) / span
        let barWidth = max(2, plot * seconds / span)
        var tip = "\(stage.name) (\(stage.kind)): \(stage.state.rawValue) after \(DisplayTime.duration(seconds))"
        if stage.attempts > 1 { tip += ", try \(stage.attempts)" }
        if stage.finishedAt == nil { tip += ", still running" }
        let tries: HTML = stage.attempts > 1 ? " ×\(stage.attempts)" : ""
        return label + """
            <g><title>\(plain: tip, limit: 300)</title><rect class="s-\(stage.state.rawValue)" x="\(x, digits: 1)" \
            y="\(y + 4, digits: 1)" width="\(barWidth, digits: 1)" height="\(rowHeight - 8, digits: 1)" rx="3"/></g>\
            <text x="\(x + barWidth + 4, digits: 1)" y="\(y + 15, digits: 1)">\(DisplayTime.duration(seconds))\(tries)</text>
            """
    }
}
