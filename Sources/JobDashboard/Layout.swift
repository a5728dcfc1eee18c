import Foundation
import JobStore

/// The frame every page shares: head, navigation, footer.
///
/// Links are relative to the page (`base` is `""` at the top level and
/// `"../"` under `/jobs/`), so the dashboard also works behind a reverse
/// proxy that serves it under a path prefix.
enum Layout {
    enum Section { case jobs, schedules, none }

    /// The policy the pages need: no script at all, inline styles, inline
    /// images (SVG is inline markup), forms to this origin only.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'"

    /// `refresh`: reload the page every so many seconds (a running job's
    /// page follows it so, without script).
    static func page(
        title: String, section: Section, base: String, snapshot: DashboardSnapshot, body: HTML, refresh: Int? = nil
    ) -> HTML {
        func tab(_ name: String, _ path: String, _ this: Section) -> HTML {
            "<a href=\"\(attribute: base + path)\"\(section == this ? " class=\"on\"" : "" as HTML)>\(name)</a>"
        }
        let build = snapshot.build
        var footer: HTML = "jobd \(build.version) · node \(build.node)"
        if let started = build.startedAt {
            footer += " · up \(DisplayTime.duration(snapshot.now.timeIntervalSince(started), coarse: true))"
        }
        footer +=
            " · rendered \(DisplayTime.utc(snapshot.now)) · <a href=\"\(attribute: base + "metrics")\">metrics</a>"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="\(attribute: contentSecurityPolicy)">
            <meta name="referrer" content="same-origin">\(refresh.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" as HTML } ?? "")
            <title>\(plain: title, limit: 120) · jobd \(plain: build.node, limit: 120)</title>
            <style>\(HTML(rendered: Styles.css + Styles.charts))</style></head>
            <body><header><a class="brand" href="\(attribute: base.isEmpty ? "./" : base)">jobd</a>
            <nav>\(tab("Jobs", "./", .jobs))\(tab("Schedules", "schedules", .schedules))</nav>
            <span class="node">\(build.node)</span></header>
            <main>
            \(body)
            </main>
            <footer>\(footer)</footer>
            </body></html>

            """
    }

    /// A job or stage state as a coloured label.
    static func badge(_ state: String) -> HTML {
        "<span class=\"state s-\(attribute: state)\">\(state)</span>"
    }

    /// A page that says what went wrong, with `detail` as user text.
    static func problem(_ heading: String, _ detail: String) -> HTML {
        "<h1>\(heading)</h1><div class=\"problem\">\(DisplayText.inline(detail, limit: DisplayText.Limits(scalars: 2000)))</div>"
    }

    /// `?state=…&definition=…` from the pairs that have a value, percent-encoded.
    static func query(_ items: [(String, String?)]) -> String {
        let pairs = items.compactMap { name, value -> String? in
            guard let value, !value.isEmpty else { return nil }
            return "\(name)=\(percentEncoded(value))"
        }
        return pairs.isEmpty ? "./" : "?" + pairs.joined(separator: "&")
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
