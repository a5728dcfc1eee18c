/// Characters that must never reach a terminal or the journal as they are,
/// whatever text they come in (a job's value, a key in a broken file): they
/// move the cursor, start escape sequences, or reorder what is shown.
public enum TerminalSafe {
    /// C0 controls and DEL, C1 controls (U+009B is a one-character CSI on
    /// many terminals), bidirectional marks, embeddings, overrides and
    /// isolates (U+202E shows text backwards), and the line and paragraph
    /// separators U+2028 and U+2029 (line breaks to some terminals and logs).
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0: return true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        case 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// `scalar` as `\u{hex}` if it is unsafe, else as it is.
    public static func escaped(_ scalar: Unicode.Scalar) -> String {
        isUnsafe(scalar) ? "\\u{" + String(scalar.value, radix: 16) + "}" : String(scalar)
    }
}
