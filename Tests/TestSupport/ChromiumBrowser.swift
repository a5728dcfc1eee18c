import Foundation
import Spawn
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One headless Chromium driven through the DevTools protocol over
/// `--remote-debugging-pipe`: JSON messages ended by a NUL byte, which
/// Chromium reads on its descriptor 3 and writes on its descriptor 4. No
/// websocket and no port: the pipe is the test's alone, and Chromium ends
/// when the test closes it (``close()``, or the test process's exit).
///
/// Pages keep cookies between loads as a browser does, so a test logs in
/// and posts forms as a visitor would.
public final class ChromiumBrowser: Sendable {
    /// Debian's Chromium, installed by scripts/test-deps.
    public static let path = "/usr/bin/chromium"

    private let process: SpawnedProcess
    /// Our end of the pipe Chromium reads (its 3).
    private let commands: Int32
    private let inbox = Inbox()
    public let log: String

    /// What the reading thread shares with the test (a class of its own, so
    /// that the thread does not keep the browser alive).
    final class Inbox: Sendable {
        let state = Mutex(State())
    }

    struct State {
        var nextID = 1
        /// Replies by command id, as JSON text.
        var replies: [Int: Data] = [:]
        /// How many of each event arrived, by `method` and session id.
        var events: [String: Int] = [:]
        var ended = false
        var closed = false
    }

    /// Starts Chromium with a profile of its own in `folder`.
    public init(folder: String) throws {
        try requireTool(Self.path, package: "chromium")
        let (toChromium, fromUs) = try Self.pipe()
        let (toUs, fromChromium) = try Self.pipe()
        log = folder + "/chromium-\(UUID().uuidString.prefix(8)).log"
        do {
            process = try SpawnedProcess(
                Self.path,
                [
                    "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--disable-dev-shm-usage",
                    "--user-data-dir=\(folder)/chromium-profile-\(UUID().uuidString.prefix(8))",
                    "--remote-debugging-pipe", "about:blank",
                ], stdout: .file(log), stderr: .sameAsStdout, passing: [toChromium, fromChromium])
        } catch {
            [toChromium, fromUs, toUs, fromChromium].forEach { _ = Glibc.close($0) }
            throw error
        }
        _ = Glibc.close(toChromium)
        _ = Glibc.close(fromChromium)
        commands = fromUs
        let inbox = self.inbox
        Thread.detachNewThread { Self.read(toUs, into: inbox) }
    }

    deinit { close() }

    private static let sharedOne = Mutex<ChromiumBrowser?>(nil)

    /// The test process's one browser, started at the first call (each test
    /// opens pages of its own in it: a start costs a second or more on a
    /// loaded machine); closed, its profile removed, when the process exits.
    public static func shared() throws -> ChromiumBrowser {
        try sharedOne.withLock { shared in
            if let shared { return shared }
            let folder = NSTemporaryDirectory() + "jobd-chromium-\(getpid())"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let browser = try ChromiumBrowser(folder: folder)
            shared = browser
            atexit {
                let browser = ChromiumBrowser.sharedOne.withLock { $0.take() }
                browser?.close()
                try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "jobd-chromium-\(getpid())")
            }
            return browser
        }
    }

    /// Closes the pipe: Chromium ends; waits up to 10 s for it, then kills it.
    public func close() {
        let first = inbox.state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        _ = Glibc.close(commands)
        if process.wait(within: .seconds(10)) == nil { _ = process.stop(grace: .seconds(1)) }
    }

    /// A new tab of `width` × `height` CSS pixels.
    public func newPage(width: Int = 1280, height: Int = 900) async throws -> ChromiumPage {
        let target = try await call("Target.createTarget", ["url": "about:blank"])
        let targetID = try Self.string(target, "targetId")
        let attached = try await call("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        let page = ChromiumPage(browser: self, session: try Self.string(attached, "sessionId"))
        _ = try await call("Page.enable", [:], session: page.session)
        try await page.resize(width: width, height: height)
        return page
    }

    /// Sends one command; gives its `result` as JSON text. Fails on a
    /// protocol error, or after 30 s without a reply.
    func call(_ method: String, _ parameters: [String: any Sendable], session: String? = nil) async throws -> Data {
        var message: [String: Any] = ["method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        let id = inbox.state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        message["id"] = id
        var bytes = try JSONSerialization.data(withJSONObject: message)
        bytes.append(0)
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(commands, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw TestFailure("chromium's pipe: \(String(cString: strerror(errno)))") }
                offset += written
            }
        }
        let start = ContinuousClock.now
        while true {
            let (reply, ended) = inbox.state.withLock { ($0.replies.removeValue(forKey: id), $0.ended) }
            if let reply {
                let object = try JSONSerialization.jsonObject(with: reply) as? [String: Any] ?? [:]
                if let error = object["error"] {
                    throw TestFailure("chromium: \(method) failed: \(error)")
                }
                return try JSONSerialization.data(withJSONObject: object["result"] ?? [:])
            }
            if ended { throw TestFailure("chromium ended during \(method): \(String(logTail))") }
            if ContinuousClock.now - start > .seconds(30) {
                throw TestFailure("chromium did not answer \(method) in 30 s: \(String(logTail))")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// How many `method` events arrived for `session` so far.
    func events(_ method: String, session: String) -> Int {
        inbox.state.withLock { $0.events[method + " " + session] ?? 0 }
    }

    /// Waits until more than `count` `method` events arrived for `session` (30 s at most).
    func waitForEvents(_ method: String, session: String, moreThan count: Int) async throws {
        let start = ContinuousClock.now
        while events(method, session: session) <= count {
            if inbox.state.withLock({ $0.ended }) { throw TestFailure("chromium ended: \(String(logTail))") }
            if ContinuousClock.now - start > .seconds(30) { throw TestFailure("no \(method) in 30 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    var logTail: Substring {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(2000)
    }

    /// The string at `key` of a result.
    static func string(_ result: Data, _ key: String) throws -> String {
        let object = try JSONSerialization.jsonObject(with: result) as? [String: Any]
        guard let value = object?[key] as? String else {
            throw TestFailure("chromium's reply has no \(key): \(String(decoding: result, as: UTF8.self).prefix(500))")
        }
        return value
    }

    /// Reads messages until Chromium closes its end.
    private static func read(_ fd: Int32, into inbox: Inbox) {
        let state = inbox
        defer { _ = Glibc.close(fd) }
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[0..<count])
            while let end = pending.firstIndex(of: 0) {
                let message = pending[pending.startIndex..<end]
                pending = Data(pending[(end + 1)...])
                guard let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any] else { continue }
                if let id = object["id"] as? Int {
                    state.state.withLock { $0.replies[id] = Data(message) }
                } else if let method = object["method"] as? String {
                    let key = method + " " + (object["sessionId"] as? String ?? "")
                    state.state.withLock { $0.events[key, default: 0] += 1 }
                }
            }
        }
        state.state.withLock { $0.ended = true }
    }

    /// A pipe with both ends close-on-exec and at 10 or above (see ``SpawnedProcess``'s `passing`).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw TestFailure("no pipe: \(String(cString: strerror(errno)))") }
        defer { fds.forEach { _ = Glibc.close($0) } }
        let read = fcntl(fds[0], F_DUPFD_CLOEXEC, 10)
        let write = fcntl(fds[1], F_DUPFD_CLOEXEC, 10)
        guard read >= 0, write >= 0 else { throw TestFailure("no descriptor: \(String(cString: strerror(errno)))") }
        return (read, write)
    }
}

/// One tab of a ``ChromiumBrowser``.
public struct ChromiumPage: Sendable {
    let browser: ChromiumBrowser
    let session: String

    /// Loads `url` and waits for its load event.
    public func open(_ url: String) async throws {
        let loads = browser.events("Page.loadEventFired", session: session)
        _ = try await browser.call("Page.navigate", ["url": url], session: session)
        try await browser.waitForEvents("Page.loadEventFired", session: session, moreThan: loads)
    }

    /// The value of a JavaScript expression, as JSON text (`JSON.stringify`).
    /// DevTools evaluates it whatever the page's Content-Security-Policy says.
    @discardableResult
    public func evaluate(_ expression: String) async throws -> String {
        let result = try await browser.call(
            "Runtime.evaluate",
            ["expression": "JSON.stringify((() => { \(expression) })())", "returnByValue": true], session: session)
        let object = try JSONSerialization.jsonObject(with: result) as? [String: Any]
        if let exception = object?["exceptionDetails"] {
            throw TestFailure("chromium: \(expression) threw: \(exception)")
        }
        return (object?["result"] as? [String: Any])?["value"] as? String ?? "undefined"
    }

    /// The page's DOM as HTML.
    public func html() async throws -> String {
        let json = try await evaluate("return document.documentElement.outerHTML")
        return try JSONDecoder().decode(String.self, from: Data(json.utf8))
    }

    /// The current address.
    public func url() async throws -> String {
        try JSONDecoder().decode(String.self, from: Data(try await evaluate("return location.href").utf8))
    }

    /// Types `value` into the field `selector` names.
    public func fill(_ selector: String, _ value: String) async throws {
        let found = try await evaluate(
            """
            const field = document.querySelector(\(Self.literal(selector)));
            if (!field) return false;
            field.value = \(Self.literal(value));
            return true
            """)
        guard found == "true" else { throw TestFailure("no \(selector) on \(try await url())") }
    }

    /// Clicks what `selector` names (a button, a link) and waits for the page it loads.
    public func click(_ selector: String) async throws {
        let loads = browser.events("Page.loadEventFired", session: session)
        // Clicked after the evaluation returns, so that its reply is not lost to the navigation.
        let found = try await evaluate(
            """
            const element = document.querySelector(\(Self.literal(selector)));
            if (!element) return false;
            setTimeout(() => element.click(), 0);
            return true
            """)
        guard found == "true" else { throw TestFailure("no \(selector) on \(try await url())") }
        try await browser.waitForEvents("Page.loadEventFired", session: session, moreThan: loads)
    }

    /// The tab's size in CSS pixels (`mobile`: a phone's viewport).
    public func resize(width: Int, height: Int, mobile: Bool = false) async throws {
        _ = try await browser.call(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile], session: session)
    }

    /// A PNG of what the tab shows.
    public func screenshot() async throws -> Data {
        let result = try await browser.call("Page.captureScreenshot", ["format": "png"], session: session)
        guard let png = Data(base64Encoded: try ChromiumBrowser.string(result, "data")) else {
            throw TestFailure("chromium's screenshot is not base64")
        }
        return png
    }

    /// `text` as a JavaScript string literal.
    static func literal(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}
