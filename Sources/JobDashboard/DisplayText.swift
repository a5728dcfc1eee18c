import Foundation

/// How user data — job input, stage values, errors, names — is shown.
///
/// - Escaped: `& < > " '` become entities (see ``HTML/escape(_:)``).
/// - Made visible: a control character becomes its Control Pictures symbol
///   (U+0007 → ␇) in a highlighted span; DEL, C1 controls, the format
///   characters (bidi overrides and isolates, zero-width spaces, the BOM)
///   and line/paragraph separators become a `U+202E` label. So a value can
///   neither hide text nor reorder what follows it ("Trojan Source").
///   Newlines and tabs stay as they are in multi-line blocks, and are shown
///   as ␊ and ␉ on one line.
/// - Cut: at most `limits.scalars` characters and `limits.bytes` bytes of
///   output, with a note saying how much was left out.
/// - Invalid UTF-8: decoded with U+FFFD (�) for each bad sequence, and said
///   to be binary; a value that is mostly bytes that are not text is shown as
///   a hex dump instead (``HexDump``).
enum DisplayText {
    struct Limits: Sendable {
        /// Unicode scalars shown at most.
        var scalars: Int
        /// Bytes of HTML written at most (escapes and markers count).
        var bytes: Int

        init(scalars: Int, bytes: Int? = nil) {
            self.scalars = scalars
            self.bytes = bytes ?? max(64, scalars * 12)
        }

        /// A cell of a list: 200 characters.
        static let inline = Limits(scalars: 200)
        /// A value on a job's page: 64 KiB.
        static let block = Limits(scalars: 65_536, bytes: 256 * 1024)
    }

    /// Rendered text, and what was left out.
    struct Rendered: Sendable {
        var rendered: String
        /// Scalars of the input that were not shown.
        var omittedScalars: Int
        var html: HTML { HTML(rendered: rendered) }
    }

    /// One line of user text (a cell, a title): newlines shown as ␊.
    static func inline(_ text: String, limit: Limits = .inline) -> HTML {
        let result = render(text.unicodeScalars, multiline: false, limits: limit)
        guard result.omittedScalars > 0 else { return result.html }
        return result.html + "<span class=\"cut\" title=\"\(result.omittedScalars) more characters\">…</span>"
    }

    /// One line of user text where no element may go: inside SVG's `<text>`
    /// and `<title>` an HTML element such as `<span>` would end the SVG, and
    /// the document's `<title>` would show it as text.
    /// Escaped; a control character shown as its picture and an invisible
    /// one as its code, without the highlight; cut at `limit` characters
    /// with a plain `…`.
    static func plain(_ text: String, limit: Int) -> String {
        var out = ""
        var shown = 0
        for scalar in text.unicodeScalars {
            if shown == limit {
                out += "…"
                break
            }
            switch scalar.value {
            case 0x00...0x1F: out.unicodeScalars.append(Unicode.Scalar(0x2400 + scalar.value) ?? "?")
            case 0x7F: out += "\u{2421}"
            case _ where isInvisible(scalar): out += "U+\(hex(scalar))"
            default: HTML.appendEscaped(scalar, to: &out)
            }
            shown += 1
        }
        return out
    }

    /// Escapes `scalars` and makes the invisible visible, up to `limits`.
    static func render(_ scalars: some Collection<Unicode.Scalar>, multiline: Bool, limits: Limits) -> Rendered {
        var out = ""
        out.reserveCapacity(min(limits.bytes, scalars.count + 16))
        var shown = 0
        for scalar in scalars {
            if shown == limits.scalars || out.utf8.count >= limits.bytes { break }
            append(scalar, multiline: multiline, to: &out)
            shown += 1
        }
        return Rendered(rendered: out, omittedScalars: scalars.count - shown)
    }

    /// Whether `scalar` is shown as a marker rather than as itself.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        // The zero-width joiner stays: it builds emoji sequences and cannot reorder text.
        case 0x200D: return false
        default: return scalar.properties.generalCategory == .format
        }
    }

    static func append(_ scalar: Unicode.Scalar, multiline: Bool, to out: inout String) {
        switch scalar.value {
        case 0x0A where multiline, 0x09 where multiline:
            out.unicodeScalars.append(scalar)
        case 0x00...0x1F:
            // Control Pictures: U+2400 + the code (␀ … ␟).
            let picture = Unicode.Scalar(0x2400 + scalar.value) ?? "?"
            out += "<span class=\"ctl\" title=\"U+\(hex(scalar))\">\(picture)</span>"
        case 0x7F:
            out += "<span class=\"ctl\" title=\"U+007F\">\u{2421}</span>"
        case _ where isInvisible(scalar):
            out += "<span class=\"ctl\">U+\(hex(scalar))</span>"
        default:
            HTML.appendEscaped(scalar, to: &out)
        }
    }

    static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// A stored value (the bytes a process printed) prepared for display.
struct DisplayValue: Sendable {
    enum Form: Sendable, Equatable {
        /// Valid UTF-8 text.
        case text
        /// Not valid UTF-8: invalid sequences shown as U+FFFD.
        case textWithInvalidBytes(count: Int)
        /// Mostly not text: shown as a hex dump.
        case hexDump
    }

    var form: Form
    var byteCount: Int
    /// The value as HTML (text or hex).
    var body: HTML
    /// What was cut or replaced, if anything: `binary: …; cut: …`.
    var note: HTML?
    var isCut: Bool

    /// On one line: the value, then its note in brackets.
    var inline: HTML {
        note.map { body + " <span class=\"note\">(\($0))</span>" } ?? body
    }

    /// - Parameters:
    ///   - limits: how much to show.
    ///   - multiline: `true` for a block (`<pre>`), `false` for a list cell.
    ///   - wholeBytes: the size of the whole value when `data` is its
    ///     beginning only (the store read no more of it).
    static func make(_ data: Data, limits: DisplayText.Limits, multiline: Bool, wholeBytes: Int? = nil) -> DisplayValue
    {
        let form = classify(data)
        let wholeBytes = max(data.count, wholeBytes ?? 0)
        let body: HTML
        var omittedBytes = 0
        switch form {
        case .hexDump:
            let shown = min(data.count, multiline ? HexDump.maxBytes : limits.scalars / 4)
            body = multiline ? HexDump.render(data.prefix(shown)) : HexDump.inline(data.prefix(shown))
            omittedBytes = data.count - shown
        case .text, .textWithInvalidBytes:
            let text = String(decoding: data, as: UTF8.self)
            let result = DisplayText.render(text.unicodeScalars, multiline: multiline, limits: limits)
            body = result.html
            if result.omittedScalars > 0 {
                // Bytes of the original not shown: those of the scalars after the cut.
                let shownScalars = text.unicodeScalars.count - result.omittedScalars
                let shownBytes = text.unicodeScalars.prefix(shownScalars).reduce(0) { $0 + UTF8.width($1) }
                omittedBytes = max(0, data.count - shownBytes)
            }
        }
        var notes: [HTML] = []
        switch form {
        case .text: break
        case .textWithInvalidBytes(let count):
            notes.append("binary: not valid UTF-8, \(count) invalid byte sequences shown as \u{FFFD}")
        case .hexDump:
            notes.append("binary: \(ByteCountText.bytes(wholeBytes)), shown as hex")
        }
        omittedBytes += wholeBytes - data.count
        if omittedBytes > 0 {
            notes.append("cut: \(ByteCountText.bytes(omittedBytes)) of \(ByteCountText.bytes(wholeBytes)) not shown")
        }
        let note =
            notes.isEmpty
            ? nil : HTML.join(notes.enumerated().map { $0.offset == 0 ? $0.element : "; " + $0.element })
        return DisplayValue(form: form, byteCount: wholeBytes, body: body, note: note, isCut: omittedBytes > 0)
    }

    /// Text, text with a few invalid bytes, or binary: binary when more than
    /// a tenth (and more than 3) of the first 4 KiB are invalid sequences or control characters
    /// other than newline, tab and carriage return.
    static func classify(_ data: Data) -> Form {
        let sample = scan(data.prefix(4096))
        // A floor of 3, so that one odd byte in a short value keeps it text.
        if sample.invalid + sample.controls > max(3, (sample.scalars + sample.invalid) / 10) {
            return .hexDump
        }
        let invalid = data.count > 4096 ? scan(data).invalid : sample.invalid
        return invalid == 0 ? .text : .textWithInvalidBytes(count: invalid)
    }

    /// Counts valid scalars, invalid sequences (each one a U+FFFD when
    /// decoded) and control characters other than `\n`, `\t` and `\r`.
    static func scan(_ bytes: Data) -> (scalars: Int, invalid: Int, controls: Int) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var counts = (scalars: 0, invalid: 0, controls: 0)
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                counts.scalars += 1
                if encoded.count == 1, let byte = encoded.first, byte < 0x20,
                    byte != 0x0A, byte != 0x09, byte != 0x0D
                {
                    counts.controls += 1
                }
            case .error:
                counts.invalid += 1
            case .emptyInput:
                return counts
            }
        }
    }
}
