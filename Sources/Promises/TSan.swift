import CPromisesSupport
import Synchronization

// Telling ThreadSanitizer about the library's locks.
//
// On Linux, `Synchronization.Mutex` is a futex driven by atomics that
// ThreadSanitizer does not instrument, so without help it reports every
// access a `Mutex` guards as a race (a ten-line program that only counts
// under a `Mutex` gets such reports). When the process runs under
// ThreadSanitizer its runtime exports `__tsan_acquire` / `__tsan_release`;
// CPromisesSupport looks them up once, when the library is loaded, and each
// critical section is announced as an acquire after locking and a release
// before unlocking. Outside ThreadSanitizer the hooks are null and a lock
// costs a load and a predictable branch more on each side. (C globals, not
// a lazily initialised Swift global, whose once-check would be a call on
// each side of every lock.)

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
    func withLock<Result: ~Copyable>(announcing address: UnsafeMutableRawPointer, _ body: () -> sending Result) -> sending Result {
        withLock { (_: inout sending Void) -> sending Result in
            promises_tsan_acquire(address)
            defer { promises_tsan_release(address) }
            return body()
        }
    }
}

extension Mutex where Value: ~Copyable {
    /// `withLock`, announced to ThreadSanitizer as a hand-off on `address`
    /// (the object that owns the lock), for a lock with a value to guard.
    @inlinable
    func withLock<Result: ~Copyable>(announcing address: UnsafeMutableRawPointer, _ body: (inout sending Value) -> sending Result) -> sending Result {
        withLock { value in
            promises_tsan_acquire(address)
            defer { promises_tsan_release(address) }
            return body(&value)
        }
    }
}
