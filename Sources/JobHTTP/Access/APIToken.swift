import Crypto
import Foundation

/// Tokens for scripts (`Authorization: Bearer TOKEN`), kept in the users
/// file as a line `NAME:ROLE:token-sha256$HEX`: the SHA-256 of the token,
/// never the token itself.
///
/// A token is 32 random bytes, so unlike a password it cannot be guessed:
/// a fast hash keeps the file as useless to a thief as PBKDF2 would, and a
/// request is checked in a microsecond rather than the tens of milliseconds
/// a password costs, which a script calling often would pay each time.
public enum APIToken {
    public static let scheme = "token-sha256"
    /// What every token starts with, so that one found in a file or a log is recognised for what it is.
    public static let prefix = "jobd_"

    /// A new token and the hash the users file keeps of it.
    public static func make() -> (token: String, hash: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token =
            prefix
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return (token, hash(token))
    }

    /// `token-sha256$HEX` of `token`.
    public static func hash(_ token: String) -> String {
        scheme + "$" + SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a users file's hash is a token's (else it is a password's).
    static func isTokenHash(_ text: String) -> Bool {
        text.hasPrefix(scheme + "$")
    }

    /// Why `text` is not a token hash jobd reads, or nil when it is.
    static func problem(with text: String) -> String? {
        let hex = text.dropFirst(scheme.count + 1)
        guard isTokenHash(text), hex.count == 64, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            return "a token hash reads \(scheme)$ and 64 lowercase hex digits (jobd --make-token makes one)"
        }
        return nil
    }
}
