#if canImport(Glibc)
import Glibc
#endif

/// The command line as bytes, as the kernel gave it.
///
/// Swift decodes `CommandLine.arguments` as UTF-8 and turns every byte that
/// is not UTF-8 into U+FFFD, so `--input $'\xff\xfe'` would reach the
/// parser as two replacement characters. A job's input is promised
/// byte-for-byte: the options that carry data look their bytes up here.
enum RawArguments {
    static let all: [[UInt8]] = (0..<Int(CommandLine.argc)).map { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
    }

    /// The bytes given to `option` (`--input X` or `--input=X`) whose
    /// decoding is `parsed`: the parser's value as it was typed. The
    /// decoded text's bytes when no argument matches (a value that came
    /// from elsewhere).
    static func value(of option: String, parsed: String, in arguments: [[UInt8]] = all) -> [UInt8] {
        let name = Array(option.utf8)
        let prefix = name + [UInt8(ascii: "=")]
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == [UInt8(ascii: "-"), UInt8(ascii: "-")] { break }
            var candidate: [UInt8]?
            if argument == name, index + 1 < arguments.count {
                candidate = arguments[index + 1]
            } else if argument.starts(with: prefix) {
                candidate = Array(argument.dropFirst(prefix.count))
            }
            if let candidate, String(decoding: candidate, as: UTF8.self) == parsed { return candidate }
            index += 1
        }
        return Array(parsed.utf8)
    }
}
