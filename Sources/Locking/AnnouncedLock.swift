import CPromisesSupport
import Synchronization

extension Mutex where Value: ~Copyable {
    /// `withLock`, with the critical section announced to ThreadSanitizer as
    /// an acquire and a release on the mutex's address.
    ///
    /// On Linux a `Mutex` is a futex driven by atomics that ThreadSanitizer
    /// does not instrument, so without the announcement every access it
    /// guards is reported as a race (Promises' `TSan.swift` has the details;
    /// the hooks are the same ones, null outside ThreadSanitizer).
    package borrowing func withAnnouncedLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            promises_tsan_acquire(address)
            defer { promises_tsan_release(address) }
            return try body(&value)
        }
    }
}
