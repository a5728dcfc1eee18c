/// A stage log line on the page: escaped and its invisible characters made
/// visible (``DisplayText``), each byte that is not UTF-8 shown as `\xFF`.
enum LogLineText {
    /// Characters of one line shown at most (a line is at most 16 KiB).
    static let limits = DisplayText.Limits(scalars: 16_384)

    static func html(_ bytes: [UInt8]) -> HTML {
        if let text = String(validating: bytes, as: UTF8.self) {
            return DisplayText.render(text.unicodeScalars, multiline: false, limits: limits).html
        }
        var out = ""
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length =
                lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            if length > 0, index + length <= bytes.count,
                let scalar = String(validating: bytes[index..<(index + length)], as: UTF8.self)
            {
                out += DisplayText.render(scalar.unicodeScalars, multiline: false, limits: limits).rendered
                index += length
            } else {
                out += "<span class=\"ctl\">\\x\(HexDump.hex2(lead).uppercased())</span>"
                index += 1
            }
        }
        return HTML(rendered: out)
    }
}
