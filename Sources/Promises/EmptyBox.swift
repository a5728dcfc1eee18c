import CPromisesSupport
import Locking
import Synchronization

/// A pending box. Its state is guarded by a `Mutex`: an uncontended lock
/// costs ~17 ns here, where PromiseKit's concurrent queue with barriers
/// costs ~560 ns a `sync`.
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
        flags = Atomic(
            UInt16(truncatingIfNeeded: ThreadDrainState.locationID(file: file, line: line))
                | (reportsLeak ? BoxFlags.reportsLeak : 0))
    }

    /// A box made where no caller said (its location is unknown).
    @inlinable
    init(reportsLeak: Bool) {
        flags = Atomic(reportsLeak ? BoxFlags.reportsLeak : 0)
    }

    deinit {
        if flags.load(ordering: .relaxed) & (BoxFlags.reportsLeak | BoxFlags.sealed) == BoxFlags.reportsLeak {
            ConfigurationStore.report(
                PMKLeakReport(event: .pendingGuaranteeDeallocated, location: location, rejecter: nil))
        }
    }

    /// Where the box was made, if a caller said so. (The id is written
    /// before the box is shared and never changes.)
    @usableFromInline
    final var location: PMKSourceLocation {
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
        HandOff.acquire(address)
        guard case .pending = sealant else {
            HandOff.release(address)
            return
        }
        let handlers = sealant.resolve(with: value)
        HandOff.release(address)
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
