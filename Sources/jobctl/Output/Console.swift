import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where jobctl writes, and what the terminal on the other end can show.
///
/// Colour is used only when stdout is a terminal, `TERM` is not `dumb`, and
/// `NO_COLOR` is unset or empty (https://no-color.org). Writes go straight
/// to the file descriptors, so raw bytes (a job's result) and text never
/// interleave out of order.
struct Console: Sendable {
    var stdoutIsTerminal: Bool
    var stderrIsTerminal: Bool
    var useColor: Bool
    /// Columns of the terminal on stdout; nil when it is not a terminal.
    var width: Int?
    /// Columns of the terminal on stderr (for progress lines); nil when it is not a terminal.
    var stderrWidth: Int?

    static func current(environment: [String: String] = Session.environment()) -> Console {
        let stdoutTerminal = isatty(STDOUT_FILENO) == 1
        let stderrTerminal = isatty(STDERR_FILENO) == 1
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let dumb = environment["TERM"] == "dumb"
        return Console(
            stdoutIsTerminal: stdoutTerminal, stderrIsTerminal: stderrTerminal,
            useColor: stdoutTerminal && !noColor && !dumb,
            width: stdoutTerminal ? terminalWidth(STDOUT_FILENO, environment: environment) : nil,
            stderrWidth: stderrTerminal ? terminalWidth(STDERR_FILENO, environment: environment) : nil)
    }

    private static func terminalWidth(_ fd: Int32, environment: [String: String]) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 80
    }

    // MARK: Writing

    func out(_ text: String) {
        Self.write(Data(text.utf8), to: STDOUT_FILENO)
    }

    func outBytes(_ data: Data) {
        Self.write(data, to: STDOUT_FILENO)
    }

    /// One line on stderr, prefixed `jobctl: `.
    func note(_ text: String) {
        Self.write(Data(("jobctl: " + text + "\n").utf8), to: STDERR_FILENO)
    }

    func err(_ text: String) {
        Self.write(Data(text.utf8), to: STDERR_FILENO)
    }

    static func write(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { raw in
            guard var base = raw.baseAddress else { return }
            var left = raw.count
            while left > 0 {
                let written = Glibc.write(fd, base, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                base += written
                left -= written
            }
        }
    }

    // MARK: Colour

    enum Color: String, Sendable {
        case red = "31", green = "32", yellow = "33", blue = "34", cyan = "36", dim = "2", bold = "1"
    }

    /// `text` in `color` when colour is on, else as it is.
    func paint(_ text: String, _ color: Color?) -> String {
        guard useColor, let color, !text.isEmpty else { return text }
        return "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m"
    }
}
