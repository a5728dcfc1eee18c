import CLocking
import Synchronization

// Locks ThreadSanitizer can see: the one place jobd's modules and the
// Promises library take a `Mutex` through.
//
// On Linux, `Synchronization.Mutex` is a futex driven by atomics that
// ThreadSanitizer does not instrument, so without help it reports every
// access a `Mutex` guards as a race (a ten-line program that only counts
// under a `Mutex` gets such reports). When the process runs under
// ThreadSanitizer its runtime exports `__tsan_acquire` / `__tsan_release`;
// CLocking looks them up once, when the process loads, and each critical
// section is announced as an acquire after locking and a release before
// unlocking. Outside ThreadSanitizer the hooks are null and a lock costs a
// load and a predictable branch more on each side.

extension Mutex where Value: ~Copyable {
    /// `withLock`, with the critical section announced to ThreadSanitizer as
    /// an acquire and a release on the mutex's address.
    @inlinable
    public borrowing func withAnnouncedLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            locking_tsan_acquire(address)
            defer { locking_tsan_release(address) }
            return try body(&value)
        }
    }

    /// `withLock`, announced to ThreadSanitizer as a hand-off on `address`
    /// (the object that owns the lock), for a lock with a value to guard.
    @inlinable
    public func withLock<Result: ~Copyable>(
        announcing address: UnsafeMutableRawPointer, _ body: (inout sending Value) -> sending Result
    ) -> sending Result {
        withLock { value in
            locking_tsan_acquire(address)
            defer { locking_tsan_release(address) }
            return body(&value)
        }
    }
}

extension Mutex where Value == Void {
    /// `withLock`, announced to ThreadSanitizer as a hand-off on `address`
    /// (the object that owns the lock).
    ///
    /// The lock's value is `Void` and `body` is not handed it: an `inout`
    /// access to a zero-sized value is instrumented as a write to the byte at
    /// its address, which is the next field of the owner — or, for a lock
    /// that ends its object, the next heap block — and ThreadSanitizer then
    /// reports races on memory the lock never touches.
    @inlinable
    public func withLock<Result: ~Copyable>(
        announcing address: UnsafeMutableRawPointer, _ body: () -> sending Result
    ) -> sending Result {
        withLock { (_: inout sending Void) -> sending Result in
            locking_tsan_acquire(address)
            defer { locking_tsan_release(address) }
            return body()
        }
    }
}

/// A hand-off between threads that no lock orders (an object handed on by
/// a reference count that only one holder is left with), told to
/// ThreadSanitizer as if a lock at `address` were taken and released.
public enum HandOff {
    @inlinable
    public static func acquire(_ address: UnsafeMutableRawPointer) {
        locking_tsan_acquire(address)
    }

    @inlinable
    public static func release(_ address: UnsafeMutableRawPointer) {
        locking_tsan_release(address)
    }
}
