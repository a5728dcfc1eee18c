import Foundation
import _CryptoExtras

/// Passwords as the users file keeps them: `pbkdf2-sha256$ROUNDS$SALT$KEY`,
/// salt and key in base64.
///
/// PBKDF2 with many rounds, so that a stolen users file costs an attacker
/// about as much per guess as a login costs jobd (tens of milliseconds):
/// a plain SHA-256 of the password would let them try billions a second.
/// PBKDF2-HMAC-SHA256 (NIST SP 800-132, OWASP's recommendation for it: 600,000 rounds) is in
/// swift-crypto, which jobd already links for PostgreSQL, and BoringSSL runs it in C.
public enum PasswordHash {
    public static let scheme = "pbkdf2-sha256"
    public static let defaultRounds = 600_000
    /// Fewer rounds than this is refused, as swift-crypto does: such a hash is too cheap to guess against.
    public static let minimumRounds = 210_000

    /// A new hash of `password` with a random salt.
    public static func make(_ password: String, rounds: Int = defaultRounds) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let key = try derive(password, salt: salt, rounds: rounds)
        return "\(scheme)$\(rounds)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())"
    }

    /// Whether `password` is the one `hash` was made from; false for a hash that is not well formed.
    public static func verify(_ password: String, against hash: String) -> Bool {
        guard let parsed = try? Parsed(hash), let key = try? derive(password, salt: parsed.salt, rounds: parsed.rounds)
        else { return false }
        return constantTimeEqual(key, parsed.key)
    }

    /// Why `hash` is not one jobd reads, or nil when it is.
    public static func problem(with hash: String) -> String? {
        do {
            _ = try Parsed(hash)
            return nil
        } catch {
            return error.reason
        }
    }

    struct Parsed {
        var rounds: Int
        var salt: [UInt8]
        var key: [UInt8]

        init(_ text: String) throws(HashError) {
            let parts = text.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 4, parts[0] == scheme else {
                throw HashError(
                    reason: "a password hash reads \(scheme)$ROUNDS$SALT$KEY (jobd --hash-password makes one)")
            }
            guard let rounds = Int(parts[1]), rounds >= minimumRounds, rounds <= 10_000_000 else {
                throw HashError(
                    reason: "a password hash needs \(minimumRounds) to 10000000 rounds, found '\(parts[1])'")
            }
            guard let salt = Data(base64Encoded: String(parts[2])), salt.count >= 8,
                let key = Data(base64Encoded: String(parts[3])), key.count == 32
            else {
                throw HashError(reason: "a password hash's salt and key are base64 (at least 8 bytes, and 32)")
            }
            self.rounds = rounds
            self.salt = Array(salt)
            self.key = Array(key)
        }
    }

    struct HashError: Error {
        var reason: String
    }

    private static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, rounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }

    /// Compares every byte whatever the first difference, so that the time taken tells nothing.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
