/// A piece of HTML that is safe to insert as it is.
///
/// Built with string interpolation that escapes by default: literal text is
/// markup the code wrote, every interpolated `String` is user data — escaped,
/// its control and bidi characters made visible, cut to 200 characters (see
/// ``DisplayText``). Only an interpolated `HTML` goes in unchanged. So a page
/// cannot forget to escape a value; it would have to wrap one in `HTML` by
/// hand, which only this module's renderers do.
///
/// ```swift
/// let row: HTML = "<td>\(job.definition)</td><td>\(job.attempt)</td>"
/// ```
struct HTML: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    private(set) var rendered: String

    init(rendered: String) {
        self.rendered = rendered
    }

    init(stringLiteral value: String) {
        rendered = value
    }

    init(stringInterpolation: Interpolation) {
        rendered = stringInterpolation.rendered
    }

    var description: String { rendered }

    static func + (lhs: HTML, rhs: HTML) -> HTML {
        HTML(rendered: lhs.rendered + rhs.rendered)
    }

    static func += (lhs: inout HTML, rhs: HTML) {
        lhs.rendered += rhs.rendered
    }

    /// The elements one after the other.
    static func join(_ parts: some Sequence<HTML>) -> HTML {
        HTML(rendered: parts.map(\.rendered).joined())
    }

    struct Interpolation: StringInterpolationProtocol {
        var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: String) {
            rendered += literal
        }

        /// User text on one line: escaped, made visible, at most 200 characters.
        mutating func appendInterpolation(_ text: String) {
            rendered += DisplayText.inline(text).rendered
        }

        mutating func appendInterpolation(_ text: String?) {
            if let text { appendInterpolation(text) }
        }

        /// User text on one line, cut at `limit` characters.
        mutating func appendInterpolation(_ text: String, limit: Int) {
            rendered += DisplayText.inline(text, limit: DisplayText.Limits(scalars: limit)).rendered
        }

        /// User text where no element may go (SVG's `<text>` and `<title>`,
        /// the document's `<title>`): escaped, made visible and cut without markup.
        mutating func appendInterpolation(plain text: String, limit: Int) {
            rendered += DisplayText.plain(text, limit: limit)
        }

        /// Text for a quoted attribute value (`title="…"`, `href="…"`):
        /// escaped, nothing cut or replaced.
        mutating func appendInterpolation(attribute text: String) {
            rendered += HTML.escape(text)
        }

        mutating func appendInterpolation(_ html: HTML) {
            rendered += html.rendered
        }

        mutating func appendInterpolation(_ number: some BinaryInteger) {
            rendered += String(number)
        }

        mutating func appendInterpolation(_ number: Double, digits: Int) {
            rendered += DisplayTime.decimal(number, digits: digits)
        }
    }

    /// Escapes the five characters that matter in text and in quoted
    /// attribute values: `&`, `<`, `>`, `"` and `'`.
    static func escape(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            appendEscaped(scalar, to: &out)
        }
        return out
    }

    @inline(__always)
    static func appendEscaped(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(scalar)
        }
    }
}
