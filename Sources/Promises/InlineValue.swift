/// Two words of raw storage in which a promise born fulfilled keeps its
/// value, so that such a promise is one object and needs no box.
///
/// A generic class cannot simply store an optional `T` for that: its
/// deinitializer (never specialised) would look `Optional<T>`'s metadata up
/// in the runtime's cache each time a promise is freed, pending ones too.
/// `InlineValue` is a plain two-word struct, so freeing a promise needs no
/// metadata; the promise's own deinitializer destroys the value it holds,
/// with the metadata of `T` the object carries.
///
/// It takes a `T` that `fits`: no bigger or more aligned than two words, and
/// bitwise takable (copying the struct moves the value; a type holding a
/// weak reference is not takable). Other values go in a `SealedBox`.
///
/// The struct does not own what it holds: it is copied bit for bit, and
/// exactly one copy — the promise's — is destroyed, once.
@usableFromInline
struct InlineValue {
    @usableFromInline
    var word0: UInt = 0
    @usableFromInline
    var word1: UInt = 0

    /// Empty storage, for a promise that does not hold its value.
    @inlinable
    init() {}

    /// Storage holding a copy of `value`; `T` must fit.
    @inlinable
    init<T>(_ value: T) {
        _withUnprotectedUnsafeMutableBytes(of: &self) { bytes in
            bytes.baseAddress.unsafelyUnwrapped.withMemoryRebound(to: T.self, capacity: 1) {
                $0.initialize(to: value)
            }
        }
    }

    /// Whether a `T` can be held.
    @inlinable
    static func fits<T>(_: T.Type) -> Bool {
        MemoryLayout<T>.size <= MemoryLayout<InlineValue>.size
            && MemoryLayout<T>.alignment <= MemoryLayout<InlineValue>.alignment
            && _isBitwiseTakable(T.self)
    }

    /// A copy of the held value, which must be a `T`.
    @inlinable
    func load<T>(as _: T.Type) -> T {
        _withUnprotectedUnsafeBytes(of: self) { $0.load(as: T.self) }
    }

    /// Destroys the held value, which must be a `T`. Called once, by the
    /// owner, which never reads it again.
    @inlinable
    func destroy<T>(as _: T.Type) {
        if _isPOD(T.self) {
            return
        }
        var bits = self
        _withUnprotectedUnsafeMutableBytes(of: &bits) { bytes in
            bytes.baseAddress.unsafelyUnwrapped.withMemoryRebound(to: T.self, capacity: 1) {
                _ = $0.deinitialize(count: 1)
            }
        }
    }
}
