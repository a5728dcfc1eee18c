import Foundation

/// Headless Chromium (Debian's, installed by scripts/test-deps), run once
/// per page, each run with a profile of its own in the test's folder: no
/// run depends on what the one before left in its profile.
public enum HeadlessChromium {
    public static let path = "/usr/bin/chromium"

    /// The DOM of the page at `url` after it loaded, as HTML.
    public static func dumpDOM(_ url: String, folder: String) async throws -> String {
        let output = folder + "/dom-\(UUID().uuidString).html"
        try await run(["--dump-dom", url], folder: folder, stdout: output)
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    /// A PNG of the page at `url` in a window of `size` (`"1280,1000"`).
    public static func screenshot(_ url: String, size: String, to file: String, folder: String) async throws {
        try await run(["--window-size=\(size)", "--screenshot=\(file)", url], folder: folder)
    }

    /// Runs Chromium once; fails after 90 s.
    static func run(_ arguments: [String], folder: String, stdout: String? = nil) async throws {
        try requireTool(path, package: "chromium")
        let log = folder + "/chromium-\(UUID().uuidString).log"
        let flags = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-dev-shm-usage", "--user-data-dir=\(folder)/chromium-profile-\(UUID().uuidString.prefix(8))",
        ]
        let child = try Child(path, flags + arguments, output: log, stdout: stdout)
        guard let status = await child.wait(timeout: .seconds(90)) else {
            throw TestFailure("chromium did not finish in 90 s: \(child.log.suffix(2000))")
        }
        guard status == 0 else { throw TestFailure("chromium exited \(status): \(child.log.suffix(2000))") }
    }
}
