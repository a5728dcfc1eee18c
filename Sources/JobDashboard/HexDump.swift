import Foundation

/// Binary values as hex, like `xxd`: offset, 16 bytes, and their printable
/// ASCII (escaped; anything else is a dot).
enum HexDump {
    /// A block shows at most this many bytes (256 lines).
    static let maxBytes = 4096

    static func render(_ bytes: Data) -> HTML {
        var out = ""
        out.reserveCapacity(bytes.count * 5)
        let all = Array(bytes)
        var offset = 0
        while offset < all.count {
            let line = all[offset..<min(offset + 16, all.count)]
            out += hex8(offset) + "  "
            for index in 0..<16 {
                out += index < line.count ? hex2(line[line.startIndex + index]) + " " : "   "
                if index == 7 { out += " " }
            }
            out += " |"
            for byte in line {
                let printable = byte >= 0x20 && byte < 0x7F
                HTML.appendEscaped(Unicode.Scalar(printable ? byte : UInt8(ascii: ".")), to: &out)
            }
            out += "|\n"
            offset += 16
        }
        return HTML(rendered: out)
    }

    /// Hex on one line: `de ad be ef`.
    static func inline(_ bytes: Data) -> HTML {
        HTML(rendered: bytes.map(hex2).joined(separator: " "))
    }

    private static let digits = Array("0123456789abcdef")

    static func hex2(_ byte: UInt8) -> String {
        String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    static func hex8(_ value: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - text.count)) + text
    }
}

/// Byte counts for people: `512 bytes`, `64.0 KiB`, `1.0 MiB`.
enum ByteCountText {
    static func bytes(_ count: Int) -> String {
        if count < 1024 { return count == 1 ? "1 byte" : "\(count) bytes" }
        if count < 1024 * 1024 { return DisplayTime.decimal(Double(count) / 1024, digits: 1) + " KiB" }
        return DisplayTime.decimal(Double(count) / (1024 * 1024), digits: 1) + " MiB"
    }
}
