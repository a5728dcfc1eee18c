import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells ThreadSanitizer about the library's locks.
///
/// On Linux, `Synchronization.Mutex` is a futex driven by atomics that
/// ThreadSanitizer does not instrument, so without help it reports every
/// access a `Mutex` guards as a race (a ten-line program that only counts
/// under a `Mutex` gets such reports). When the process runs under
/// ThreadSanitizer its runtime exports `__tsan_acquire` / `__tsan_release`;
/// they are looked up once, and each critical section is announced as an
/// acquire after locking and a release before unlocking. Outside
/// ThreadSanitizer the lookup finds nothing and a lock costs one predictable
/// branch more (and the once-check of the lazy global, ~20 instructions).
///
/// Declaring the two functions weak in C instead, which saves the
/// once-check, was tried and measured: under ThreadSanitizer, races were
/// then reported in `ClientCodeTests.typicalChain` in 6 of 80 runs, against
/// 0 of 100 with this lookup. Why is not known; the lookup stays.
@usableFromInline
struct TSan: Sendable {
    @usableFromInline
    typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    @usableFromInline
    let acquire: Annotation?

    @usableFromInline
    let release: Annotation?

    /// The runtime's annotation functions, or nils outside ThreadSanitizer.
    /// One lazily initialised global, read once per critical section.
    @usableFromInline
    static let runtime = TSan(acquire: lookUp("__tsan_acquire"), release: lookUp("__tsan_release"))

    @usableFromInline
    init(acquire: Annotation?, release: Annotation?) {
        self.acquire = acquire
        self.release = release
    }

    private static func lookUp(_ name: String) -> Annotation? {
        // RTLD_DEFAULT: search the whole process.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: Annotation.self)
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
    func withLock<Result: ~Copyable>(announcing address: UnsafeMutableRawPointer, _ body: () -> sending Result) -> sending Result {
        let tsan = TSan.runtime
        return withLock { (_: inout sending Void) -> sending Result in
            if let acquire = tsan.acquire { acquire(address) }
            defer { if let release = tsan.release { release(address) } }
            return body()
        }
    }
}

extension Mutex where Value: ~Copyable {
    /// `withLock`, announced to ThreadSanitizer as a hand-off on `address`
    /// (the object that owns the lock), for a lock with a value to guard.
    @inlinable
    func withLock<Result: ~Copyable>(announcing address: UnsafeMutableRawPointer, _ body: (inout sending Value) -> sending Result) -> sending Result {
        let tsan = TSan.runtime
        return withLock { value in
            if let acquire = tsan.acquire { acquire(address) }
            defer { if let release = tsan.release { release(address) } }
            return body(&value)
        }
    }
}
