/// A number of bytes, as written in jobd.yaml: `512`, `512B`, `64KiB`,
/// `1MiB`, `2GiB` (powers of 1024) or `64KB`, `1MB`, `2GB` (powers of 1000).
/// Units are case-sensitive; no fractions, signs or spaces inside.
public struct ByteSize: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var bytes: Int

    public init(bytes: Int) {
        self.bytes = bytes
    }

    /// The largest value a store keeps (a job's input, a stage's value, a
    /// job's result, an error's text): 512 MiB. SQLite holds at most
    /// 1,000,000,000 bytes in one value or row (SQLITE_MAX_LENGTH), and a
    /// stage's row holds its value beside its error text; a value is also
    /// held in memory, in full, more than once on its way to the disk.
    public static let storedValueLimit = ByteSize(bytes: 512 << 20)

    public static func kibibytes(_ n: Int) -> ByteSize { ByteSize(bytes: n * 1024) }
    public static func mebibytes(_ n: Int) -> ByteSize { ByteSize(bytes: n * 1024 * 1024) }

    static let units: [String: Int] = [
        "": 1, "B": 1,
        "KB": 1_000, "MB": 1_000_000, "GB": 1_000_000_000,
        "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
    ]

    public init(parsing text: some StringProtocol) throws(ValueParseError) {
        let input = String(text)
        func fail(_ code: ValueParseError.Code, _ reason: String) -> ValueParseError {
            ValueParseError(code: code, kind: "size", input: input, reason: reason)
        }
        let hint = "write an integer and a unit (B, KiB, MiB, GiB, KB, MB, GB), e.g. 1MiB"
        let body = Array(input.trimmingWhitespace.utf8)
        guard !body.isEmpty else { throw fail(.empty, "it is empty; \(hint)") }
        if body[0] == UInt8(ascii: "-") { throw fail(.negative, "sizes cannot be negative") }

        var index = 0
        var number = 0
        var overflowed = false
        while index < body.count, let digit = body[index].asciiDigit {
            let (times10, o1) = number.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int(digit))
            overflowed = overflowed || o1 || o2
            number = sum
            index += 1
        }
        guard index > 0 else { throw fail(.malformed, "it does not start with a number; \(hint)") }
        let unit = String(decoding: body[index...], as: UTF8.self)
        if unit.hasPrefix(".") {
            throw fail(.malformed, "fractions are not accepted; use a smaller unit (1536KiB, not 1.5MiB)")
        }
        guard let multiplier = Self.units[unit] else {
            throw fail(.unknownUnit, "unknown unit \"\(unit)\"; \(hint)")
        }
        let (total, o3) = number.multipliedReportingOverflow(by: multiplier)
        if overflowed || o3 { throw fail(.overflow, "it is too large") }
        bytes = total
    }

    /// The largest binary unit that divides the size exactly: `1MiB`, `1500B`.
    public var description: String {
        for (unit, size) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes != 0 && bytes % size == 0 {
            return "\(bytes / size)\(unit)"
        }
        return "\(bytes)B"
    }

    public static func < (lhs: ByteSize, rhs: ByteSize) -> Bool { lhs.bytes < rhs.bytes }
}
