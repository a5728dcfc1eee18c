import Foundation
import Synchronization

/// Login sessions, in memory: a restart of jobd logs everyone out.
///
/// A session is a random 256-bit token in a cookie, with the user, the
/// role, a CSRF token for the forms its pages show, and an expiry.
final class SessionStore: Sendable {
    struct Session: Sendable {
        var user: String
        var role: DashboardRole
        var csrf: String
        var expires: ContinuousClock.Instant
    }

    /// At most this many sessions at once; the oldest go first.
    static let capacity = 10_000

    let lifetime: Duration
    private let sessions = Mutex<[String: Session]>([:])

    init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    /// A new session for `user`: its token.
    func open(user: String, role: DashboardRole) -> String {
        let token = Self.randomToken()
        let now = ContinuousClock.now
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expires > now }
            if sessions.count >= Self.capacity,
                let oldest = sessions.min(by: { $0.value.expires < $1.value.expires })?.key
            {
                sessions[oldest] = nil
            }
            sessions[token] = Session(user: user, role: role, csrf: Self.randomToken(), expires: now + lifetime)
        }
        return token
    }

    /// The live session of `token`, if any.
    func session(_ token: String) -> Session? {
        sessions.withLock { sessions in
            guard let session = sessions[token] else { return nil }
            guard session.expires > .now else {
                sessions[token] = nil
                return nil
            }
            return session
        }
    }

    func close(_ token: String) {
        _ = sessions.withLock { $0.removeValue(forKey: token) }
    }

    /// 32 random bytes, base64url.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Failed logins per client address: after ``maxFailures`` within
/// ``window``, logins from that address are refused until the window has
/// passed since its first failure.
final class LoginThrottle: Sendable {
    static let maxFailures = 5
    static let window = Duration.seconds(300)

    private struct Record {
        var failures: Int
        var since: ContinuousClock.Instant
    }

    private let records = Mutex<[String: Record]>([:])

    /// How long `address` must wait before it may try again; nil when it may now.
    func wait(for address: String) -> Duration? {
        let now = ContinuousClock.now
        return records.withLock { records in
            guard let record = records[address] else { return nil }
            let end = record.since + Self.window
            if end <= now {
                records[address] = nil
                return nil
            }
            return record.failures >= Self.maxFailures ? end - now : nil
        }
    }

    func failed(_ address: String) {
        let now = ContinuousClock.now
        records.withLock { records in
            if records.count > 100_000 { records = records.filter { $0.value.since + Self.window > now } }
            var record = records[address] ?? Record(failures: 0, since: now)
            if record.since + Self.window <= now { record = Record(failures: 0, since: now) }
            record.failures += 1
            records[address] = record
        }
    }

    func succeeded(_ address: String) {
        _ = records.withLock { $0.removeValue(forKey: address) }
    }
}
