/// A box holds the eventual result of a promise or guarantee.
///
/// PromiseKit's design: an abstract `Box` with two concrete kinds, `SealedBox`
/// (born with its value; needs no lock) and `EmptyBox` (pending until
/// sealed; guarded by a lock). `inspect`, `seal` and `pipe` tell the two
/// kinds apart by their class rather than through a virtual call: a virtual
/// call on a generic class reaches the unspecialised code, which looks up
/// generic metadata at run time and costs several times a dispatch hop.
@usableFromInline
class Box<T>: QueueWork, @unchecked Sendable {
    // @unchecked Sendable: the base class has no state; see the subclasses.

    @usableFromInline
    override init() {}
}

extension Box {
    /// Whether the box is a `SealedBox` (born resolved) rather than an
    /// `EmptyBox`.
    @inlinable
    @inline(__always)
    var isSealedBox: Bool {
        // `SealedBox` is final and every other box is an `EmptyBox` (or a
        // `StepBox`, its subclass), so comparing class pointers is exact —
        // and, unlike `as?`, costs no runtime call. Compared as raw
        // pointers: the same test written with `ObjectIdentifier` or `==` on
        // metatypes crashes the Swift 6.3.1 optimiser (SimplifyCFG) in
        // release builds of some callers.
        let actual = unsafeBitCast(type(of: self), to: UnsafeRawPointer.self)
        let sealed = unsafeBitCast(SealedBox<T>.self, to: UnsafeRawPointer.self)
        return actual == sealed
    }

    /// The box as the `EmptyBox` it is; only where `!isSealedBox`. Used
    /// straight (`asEmpty.attach(…)`), the cast borrows the box; an
    /// optional `EmptyBox` returned by a getter is a new reference, which
    /// costs a retain and a release around the call.
    @inlinable
    @inline(__always)
    var asEmpty: EmptyBox<Sealant<T>> {
        unsafeDowncast(self, to: EmptyBox<Sealant<T>>.self)
    }

    /// The box as the `SealedBox` it is; only where `isSealedBox`.
    @inlinable
    @inline(__always)
    var asSealed: SealedBox<T> {
        unsafeDowncast(self, to: SealedBox<T>.self)
    }

    /// The box's current state.
    @inlinable
    func inspect() -> Sealant<T> {
        isSealedBox ? .resolved(asSealed.value) : asEmpty.current()
    }

    /// Calls `body` with the box's state: under the box's lock while pending
    /// (so `body` may append a handler), outside it once resolved (a resolved
    /// box never changes, and calling out under a lock invites deadlock).
    @inlinable
    func inspect(_ body: (inout Sealant<T>) -> Void) {
        if isSealedBox {
            var sealant = Sealant<T>.resolved(asSealed.value)
            body(&sealant)
        } else {
            asEmpty.withSealant(body)
        }
    }

    /// Seals the box with `value` and runs the waiting handlers. Sealing a
    /// box that is already sealed does nothing: the first value wins.
    @inlinable
    func seal(_ value: T) {
        if !isSealedBox {
            asEmpty.settle(value)
        }
    }

    /// Adds `handler` to run when the box is sealed, or runs it now if the
    /// box is already sealed (outside any lock).
    @inlinable
    func pipe(_ handler: consuming @escaping (T) -> Void) {
        if isSealedBox {
            handler(asSealed.value)
        } else {
            asEmpty.attach(handler)
        }
    }
}

/// A box born resolved: `Guarantee.value(_:)`, `Promise(error:)`,
/// `done(on: nil)` on a resolved promise. (`Promise.value(_:)`, `Promise()`
/// and `map(on: nil)` of a value that fits an `InlineValue` make a promise
/// that holds it itself, without a box.)
@usableFromInline
final class SealedBox<T>: Box<T>, @unchecked Sendable {
    // @unchecked Sendable: `value` is a `let`, written once before the box is shared.

    @usableFromInline
    let value: T

    @inlinable
    init(value: T) {
        self.value = value
    }
}
