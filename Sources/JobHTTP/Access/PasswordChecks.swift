import Dispatch

/// Where password checks run. A check is slow by design (PBKDF2, hundreds
/// of thousands of rounds): run where the request is handled, a burst of
/// logins would hold the threads that serve every other connection. Here
/// they run on a queue of their own, one at a time, so a burst of logins
/// slows only logins (each address is also held to a few failures by
/// ``LoginThrottle``).
enum PasswordChecks {
    private static let queue = DispatchQueue(label: "jobd.http.password-checks", qos: .utility)

    static func run<T: Sendable>(_ check: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: check()) }
        }
    }
}
