import JobValues

/// A syntax error inside a JSON document or path.
struct JSONSyntaxError: Error {
    var message: String
}

/// A cursor over UTF-8 bytes with the pieces of JSON's grammar.
struct JSONScanner {
    let bytes: [UInt8]
    private(set) var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func advance() { index += 1 }

    mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    mutating func takeWhile(_ predicate: (UInt8) -> Bool) -> ArraySlice<UInt8> {
        let start = index
        while let byte = peek, predicate(byte) { index += 1 }
        return bytes[start..<index]
    }

    mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// An error naming the current place as a line and column.
    func error(_ problem: String) -> JSONSyntaxError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONSyntaxError(message: "\(problem) at line \(line), column \(column)")
    }

    /// An optionally negative decimal integer (for path indexes).
    mutating func parseInteger() -> Int? {
        let negative = take(UInt8(ascii: "-"))
        let digits = takeWhile { $0.asciiDigit != nil }
        guard !digits.isEmpty, let value = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        return negative ? -value : value
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else {
            throw error("nested deeper than \(JSONValue.maximumDepth) levels")
        }
        guard let byte = peek else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            advance()
            var members: [JSONValue.Member] = []
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return .object(members) }
            while true {
                skipWhitespace()
                guard peek == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes") }
                let key = try parseString()
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { throw error("expected ':' after a member name") }
                skipWhitespace()
                members.append(JSONValue.Member(key: key, value: try parseValue(depth: depth + 1)))
                skipWhitespace()
                if take(UInt8(ascii: "}")) { return .object(members) }
                guard take(UInt8(ascii: ",")) else { throw error("expected ',' or '}'") }
            }
        case UInt8(ascii: "["):
            advance()
            var elements: [JSONValue] = []
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return .array(elements) }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                if take(UInt8(ascii: "]")) { return .array(elements) }
                guard take(UInt8(ascii: ",")) else { throw error("expected ',' or ']'") }
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            for (word, value) in [("true", JSONValue.bool(true)), ("false", .bool(false)), ("null", .null)]
            where bytes[index...].starts(with: word.utf8) {
                index += word.utf8.count
                return value
            }
            throw error("unexpected character")
        }
    }

    /// A number's exact text, checked against JSON's grammar.
    mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        _ = take(UInt8(ascii: "-"))
        if !take(UInt8(ascii: "0")) {
            guard takeWhile({ $0.asciiDigit != nil }).count > 0 else { throw error("expected a digit") }
        }
        if take(UInt8(ascii: ".")) {
            guard takeWhile({ $0.asciiDigit != nil }).count > 0 else { throw error("expected a digit after '.'") }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard takeWhile({ $0.asciiDigit != nil }).count > 0 else { throw error("expected a digit in the exponent") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A double-quoted JSON string, escapes decoded.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        guard take(UInt8(ascii: "\"")) else { throw error("expected '\"'") }
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw error("unterminated string") }
            advance()
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: out, as: UTF8.self) else { throw error("a string is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = peek else { throw error("unterminated string") }
                advance()
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")) else {
                            throw error("a \\u escape holds half a surrogate pair")
                        }
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error("a \\u escape holds half a surrogate pair")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else {
                        throw error("a \\u escape holds half a surrogate pair")
                    }
                    out += String(Character(unicode)).utf8
                default:
                    throw error("unknown escape '\\\(String(decoding: [escape], as: UTF8.self))'")
                }
            case 0..<0x20:
                throw error("a control character inside a string must be escaped")
            default:
                out.append(byte)
            }
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count,
            bytes[index..<index + 4].allSatisfy({
                $0.asciiDigit != nil || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20)
            }),
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw error("expected four hex digits after \\u") }
        index += 4
        return value
    }
}
