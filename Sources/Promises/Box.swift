import CPromisesSupport
import Synchronization

/// What a box holds: the handlers still waiting for a value, or the value.
///
/// A box starts `pending` (or is born `resolved`, see `SealedBox`) and moves
/// to `resolved` exactly once; it never moves back.
@usableFromInline
enum Sealant<R> {
    case pending(Handlers<R>)
    case resolved(R)
}

/// What an `EmptyBox` stores: a `Sealant`. A protocol only so that the box
/// can be generic over its state (`EmptyBox<Sealant<T>>`): see `EmptyBox`.
@usableFromInline
protocol SealantStorage {
    associatedtype Value
    init(_ sealant: Sealant<Value>)
    var sealant: Sealant<Value> { get set }
}

extension Sealant {
    /// Resolves a pending sealant with `value` and returns the handlers it
    /// held.
    @inlinable
    mutating func resolve(with value: R) -> Handlers<R> {
        guard case .pending(let handlers) = self else {
            preconditionFailure("Promises: resolve(with:) on a resolved sealant")
        }
        self = .resolved(value)
        return handlers
    }
}

extension Sealant: SealantStorage {
    @usableFromInline
    typealias Value = R

    @inlinable
    init(_ sealant: Sealant<R>) { self = sealant }

    @inlinable
    var sealant: Sealant<R> {
        get { self }
        _modify { yield &self }
    }
}

/// The bodies waiting on a pending box, called in the order they were added.
///
/// The first body is stored inline, so the common case — one handler per
/// promise — allocates no array (swift-nio's `CallbackList` does the same).
@usableFromInline
struct Handlers<R> {
    @usableFromInline
    enum Storage {
        case none
        case one((R) -> Void)
        case many(HandlerList<R>)
    }

    @usableFromInline
    var storage: Storage

    @inlinable
    init() { storage = .none }

    @inlinable
    init(_ storage: Storage) { self.storage = storage }

    @inlinable
    var isEmpty: Bool {
        if case .none = storage { return true }
        return false
    }

    @inlinable
    mutating func append(_ body: @escaping (R) -> Void) {
        switch storage {
        case .none:
            storage = .one(body)
        case .one(let first):
            storage = .many(HandlerList([first, body]))
        case .many(let list):
            list.bodies.append(body)
        }
    }

    /// Moves `other`'s bodies after this list's, leaving `other` empty.
    /// When this list is empty — a promise's first handler — the two are
    /// swapped, so no handler is copied (a copy is a retain of its context,
    /// and a release when the copy it was made from goes).
    @inlinable
    mutating func takeAll(from other: inout Handlers) {
        if case .none = storage {
            swap(&self, &other)
            return
        }
        let incoming = other
        other = Handlers()
        switch incoming.storage {
        case .none:
            break
        case .one(let body):
            append(body)
        case .many(let list):
            for body in list.bodies { append(body) }
        }
    }

    /// Calls the bodies. Consuming, so that a body is called through the
    /// one reference the list had, not a copy: the box a step's handler
    /// captures is then held once while its step runs (see
    /// `EmptyBox.isSoleReference`).
    @inlinable
    consuming func callAll(with value: R) {
        switch storage {
        case .none:
            break
        case .one(let body):
            body(value)
        case .many(let list):
            for body in list.bodies { body(value) }
        }
    }
}

/// Second and later handlers of one box. Only reached while the box's lock
/// is held (appends) or after the box is sealed and the list was taken out
/// of it (calls), so it is never touched by two threads at once.
@usableFromInline
final class HandlerList<R> {
    @usableFromInline
    @exclusivity(unchecked)
    var bodies: [(R) -> Void]

    @inlinable
    init(_ bodies: [(R) -> Void]) { self.bodies = bodies }
}

/// A box holds the eventual result of a promise or guarantee.
///
/// The seeds' design: an abstract `Box` with two concrete kinds, `SealedBox`
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

/// A pending box. Its state is guarded by a `Mutex` — where the seeds use a
/// concurrent queue with barriers (~560 ns a `sync` here), an uncontended
/// lock costs ~17 ns.
///
/// The pending box of a `T` is `EmptyBox<Sealant<T>>`: generic over its
/// state rather than over `T`. Deinitializers are never specialised; a box
/// with a stored `Sealant<T>` would look that type's metadata up in the
/// runtime's cache each time one is freed (~400 instructions, a fifth of a
/// pending → fulfilled promise), whereas a stored `State` is destroyed with
/// metadata the class carries as its own generic argument.
@usableFromInline
class EmptyBox<State: SealantStorage>: Box<State.Value>, @unchecked Sendable {
    // @unchecked Sendable: `state` is read and written only inside
    // `lock.withLock`, except where no other reference to the box exists
    // (`deinit`, `settleAlone`); `flags` is atomic, written by `init` and
    // then only by the thread that sealed the box.
    @usableFromInline
    typealias T = State.Value

    // Field order matters: the state (18 bytes for a small T), then `flags`
    // in what would be padding, then the 4-byte lock — 40 bytes, a 48-byte
    // malloc chunk. Another order costs a 64-byte chunk. Exclusivity is
    // guaranteed by `lock`, so the runtime's dynamic check (a thread-local
    // lookup per access) is switched off for the state.
    @usableFromInline
    @exclusivity(unchecked)
    final var state: State = State(.pending(Handlers()))

    /// The state: the handlers waiting, or the value.
    @inlinable
    final var sealant: Sealant<T> {
        get { state.sealant }
        _modify { yield &state.sealant }
    }

    /// Bits that need no knowledge of `T`, so that deinitializers can read
    /// them cheaply: the `LocationTable` id of the call site that made the
    /// box (0 inside chains), and the `BoxFlags`.
    ///
    /// Atomic so that it can be read without the lock: the sealed bit is
    /// stored (releasing) by the thread that sealed the box, after the
    /// value, and never cleared, so a reader that sees it set knows the box
    /// is sealed — `isPending` in a resolver's deinitializer costs a load,
    /// not a lock. On x86-64 and arm64 these loads and stores are plain
    /// moves; a 2-byte atomic packs as a plain `UInt16` does.
    @usableFromInline
    final let flags: Atomic<UInt16>

    @usableFromInline
    final let lock = Mutex<Void>(())

    /// The box's address, which names its lock to ThreadSanitizer.
    @inlinable
    final var address: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    @inlinable
    override init() {
        flags = Atomic(0)
    }

    /// A box made at `file:line`; `reportsLeak` for a guarantee's box,
    /// which has no resolver object to notice the leak.
    @inlinable
    init(file: StaticString, line: UInt, reportsLeak: Bool = false) {
        flags = Atomic(UInt16(truncatingIfNeeded: ThreadDrainState.locationID(file: file, line: line)) | (reportsLeak ? BoxFlags.reportsLeak : 0))
    }

    deinit {
        if flags.load(ordering: .relaxed) & (BoxFlags.reportsLeak | BoxFlags.sealed) == BoxFlags.reportsLeak {
            conf.report(LeakReport(event: .pendingGuaranteeDeallocated, location: location, rejecter: nil))
        }
    }

    /// Where the box was made, if a caller said so. (The id is written
    /// before the box is shared and never changes.)
    @usableFromInline
    final var location: SourceLocation {
        LocationTable.location(of: UInt32(flags.load(ordering: .relaxed) & BoxFlags.locationMask))
    }

    /// Whether the box is still pending, without the lock: for a resolver's
    /// deinitializer, when nothing else can be sealing the box. Reads no
    /// `T`-typed state.
    @usableFromInline
    final var isPending: Bool {
        flags.load(ordering: .acquiring) & BoxFlags.sealed == 0
    }

    /// Sets the sealed bit. Called by the one thread that sealed the box,
    /// after it unlocks (inside the lock, the atomic store would keep the
    /// optimiser from turning the copy of the handlers and the release of
    /// the old state into a move: a retain and a release more). The location
    /// bits never change after `init`, so this is the only writer: a load
    /// and a store do.
    @inlinable
    final func markSealed() {
        flags.store(flags.load(ordering: .relaxed) | BoxFlags.sealed, ordering: .releasing)
    }

    @inlinable
    final func current() -> Sealant<T> {
        var copy: Sealant<T>?
        lock.withLock(announcing: address) { copy = sealant }
        return copy.unsafelyUnwrapped
    }

    @inlinable
    final func withSealant(_ body: (inout Sealant<T>) -> Void) {
        var resolved: Sealant<T>?
        var sealedNow = false
        lock.withLock(announcing: address) {
            switch sealant {
            case .pending:
                body(&sealant)
                if case .resolved = sealant {
                    sealedNow = true
                }
            case .resolved:
                resolved = sealant
            }
        }
        if sealedNow {
            markSealed()
        }
        if var resolved {
            body(&resolved)
        }
    }

    /// Whether the caller holds the only strong reference to the box.
    ///
    /// If so, no other thread can reach the box, now or later — a new
    /// reference can only be copied from an existing one — so the box can
    /// be sealed without its lock. That is common: the box of a step whose
    /// promise the caller dropped (`_ = p.done { … }`, or any link inside
    /// `a.map { … }.done { … }`) is held only by the handler that is
    /// running its step. The runtime's check loads the reference count with
    /// acquiring order, and the last release by another thread was a
    /// releasing decrement, so what that thread wrote is visible.
    ///
    /// `isKnownUniquelyReferenced` needs an `inout` reference, and a copy
    /// of `self` would be a second reference (and a retain): the check is
    /// made on an unretained copy of the pointer, rebound in place.
    @inlinable
    final var isSoleReference: Bool {
        var unretained = Unmanaged.passUnretained(self)
        return withUnsafeMutablePointer(to: &unretained) { pointer in
            pointer.withMemoryRebound(to: EmptyBox.self, capacity: 1) {
                isKnownUniquelyReferenced(&$0.pointee)
            }
        }
    }

    @inlinable
    final func settle(_ value: T) {
        if isSoleReference {
            settleAlone(value)
            return
        }
        var handlers = Handlers<T>()
        var sealedNow = false
        lock.withLock(announcing: address) {
            guard case .pending = sealant else { return }
            handlers = sealant.resolve(with: value)
            sealedNow = true
        }
        if sealedNow {
            markSealed()
        }
        if !handlers.isEmpty {
            Trampoline.run(consume handlers, with: value)
        }
    }

    /// `settle` for a box no other reference reaches (see
    /// `isSoleReference`): no lock. The hand-off is still announced to
    /// ThreadSanitizer, which does not see the reference count's ordering.
    @inlinable
    final func settleAlone(_ value: T) {
        promises_tsan_acquire(address)
        guard case .pending = sealant else {
            promises_tsan_release(address)
            return
        }
        let handlers = sealant.resolve(with: value)
        promises_tsan_release(address)
        markSealed()
        if !handlers.isEmpty {
            Trampoline.run(handlers, with: value)
        }
    }

    @inlinable
    @inline(__always)
    final func attach(_ handler: consuming @escaping (T) -> Void) {
        // The handler goes into a list of its own first, which the box's
        // list then takes over (see `Handlers.takeAll(from:)`): moved, not
        // copied, through the lock's closure.
        var incoming = Handlers<T>(.one(consume handler))
        var resolved: T?
        lock.withLock(announcing: address) {
            switch sealant {
            case .pending(var waiting):
                // Drop the box's reference before appending, so a `many`
                // list is mutated in place rather than copied.
                sealant = .pending(Handlers())
                waiting.takeAll(from: &incoming)
                sealant = .pending(waiting)
            case .resolved(let value):
                resolved = value
            }
        }
        if let resolved {
            incoming.callAll(with: resolved)
        }
    }
}

/// The bits of `EmptyBox.flags` beside the location id. Computed, not
/// stored: a `static let` is a lazily initialised global, checked on every
/// read — and deinitializers read these.
@usableFromInline
enum BoxFlags {
    /// The box was sealed.
    @inlinable static var sealed: UInt16 { 0x8000 }
    /// The box reports itself when deallocated pending (guarantees).
    @inlinable static var reportsLeak: UInt16 { 0x4000 }
    /// The `LocationTable` id.
    @inlinable static var locationMask: UInt16 { 0x3FFF }
}
