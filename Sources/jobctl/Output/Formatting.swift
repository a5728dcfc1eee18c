import Foundation
import JobConfig
import JobControl

#if canImport(Glibc)
import Glibc
#endif

/// How times, durations and stored values read in jobctl's output.
enum Formatting {
    /// `2026-11-21T05:54:03.127Z`: UTC with milliseconds, as the database
    /// keeps it (docs/schema.md), so what jobctl prints can be pasted into SQL.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (secondsPart, millisPart) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(millisPart < 0 ? secondsPart - 1 : secondsPart)
        let millis = millisPart < 0 ? millisPart + 1000 : millisPart
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    static func timestamp(_ date: Date?) -> JSON {
        date.map { .string(timestamp($0)) } ?? .null
    }

    /// Whole milliseconds from `start` to `end`, if both are known.
    /// Start to end in whole milliseconds; 0 when the end reads earlier
    /// (the wall clock stepped back in between), as the text shows it.
    static func milliseconds(from start: Date?, to end: Date?) -> Int64? {
        guard let start, let end else { return nil }
        return max(0, Int64(((end.timeIntervalSince1970 - start.timeIntervalSince1970) * 1000).rounded()))
    }

    /// A short reading of a duration: `850ms`, `4.2s`, `3m07s`, `2h05m`, `3d4h`.
    static func duration(milliseconds ms: Int64) -> String {
        let ms = max(0, ms)
        switch ms {
        case ..<1_000:
            return "\(ms)ms"
        case ..<60_000:
            let tenths = (ms + 50) / 100
            return tenths % 10 == 0 ? "\(tenths / 10)s" : "\(tenths / 10).\(tenths % 10)s"
        case ..<3_600_000:
            let seconds = ms / 1000
            return "\(seconds / 60)m" + twoDigits(seconds % 60) + "s"
        case ..<86_400_000:
            let minutes = ms / 60_000
            return "\(minutes / 60)h" + twoDigits(minutes % 60) + "m"
        default:
            let hours = ms / 3_600_000
            return "\(hours / 24)d\(hours % 24)h"
        }
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    // MARK: Values

    /// A stored value in JSON: a string when it is UTF-8 text, else
    /// `{"base64": "…"}` so that no byte is lost.
    static func valueJSON(_ data: Data?) -> JSON {
        guard let data else { return .null }
        if let text = String(validating: data, as: UTF8.self) { return .string(text) }
        return .fields([("base64", .string(data.base64EncodedString()))])
    }

    /// A stored value on one line: control characters escaped (`\n`, `\t`,
    /// `\u{1b}`, C1 controls, bidi overrides: ``TerminalSafe``), bytes that are not text summarised, and — given a limit —
    /// cut to `limit` characters with `…`.
    static func valueText(_ data: Data?, limit: Int? = nil) -> String {
        guard let data else { return "" }
        guard let text = String(validating: data, as: UTF8.self) else {
            return "<\(data.count) bytes, not UTF-8 text; see --json>"
        }
        return oneLine(text, limit: limit)
    }

    /// `text` on one line (control characters escaped), cut to `limit`
    /// characters with `…` if it is longer.
    static func oneLine(_ text: String, limit: Int? = nil) -> String {
        var output = ""
        var count = 0
        // Where to cut if an ellipsis is needed: the end of the last piece
        // that leaves room for it.
        var cut = 0
        for character in text {
            let piece = escaped(character)
            if let limit, count + piece.count > limit {
                return String(decoding: output.utf8.prefix(cut), as: UTF8.self) + "…"
            }
            output += piece
            count += piece.count
            if let limit, count < limit { cut = output.utf8.count }
        }
        return output
    }

    private static func escaped(_ character: Character) -> String {
        switch character {
        case "\n", "\r\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            guard character.unicodeScalars.contains(where: TerminalSafe.isUnsafe) else { return String(character) }
            return character.unicodeScalars.map(TerminalSafe.escaped).joined()
        }
    }
}
