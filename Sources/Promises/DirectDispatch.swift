import CPromisesSupport
import Dispatch

#if canImport(CDispatch)
import CDispatch
#endif

/// Work a queue can run without a block: the base of every box, so that a
/// `StepBox` can be handed to `dispatch_async_f` as its context pointer.
///
/// `DispatchQueue.async` takes a block, and a block is a heap object that
/// Dispatch copies when the work is queued and frees when it has run: a
/// malloc and a free per hop, on two threads, plus the copy and release
/// helpers (~450 instructions a hop, measured with callgrind). libdispatch's
/// `dispatch_async_f` takes a C function and a context pointer instead, and
/// the box a hop runs for is already a heap object. A C function cannot be
/// generic, so the one here calls `run()`, which `StepBox` overrides. The
/// class has no stored properties: it costs a box no memory.
@usableFromInline
class QueueWork: @unchecked Sendable {
    // @unchecked Sendable: no state.

    @usableFromInline
    init() {}

    /// Runs the work. Overridden by `StepBox`; other boxes are never queued.
    @usableFromInline
    func run() {}
}

/// Hands `QueueWork` to a queue with `dispatch_async_f`, where that is known
/// to be sound.
///
/// The same queueing as `DispatchQueue.async` without a group, QoS or flags
/// (which swift-corelibs-libdispatch passes straight to `dispatch_async`):
/// same queue, same order, same thread rules.
@usableFromInline
enum DirectDispatch {
    /// Whether `wrapped` may be used: one load, and a call (`checkUsable`)
    /// only the first time. Where it may not, callers use
    /// `DispatchQueue.async`. A step asks before it reads its queue from
    /// where it is stored: across a call the optimiser would retain the
    /// queue it had read.
    ///
    /// swift-corelibs-libdispatch's `DispatchQueue` keeps its C queue in a
    /// stored property it does not make public, the object's first word
    /// after the Swift header. That this holds is checked once per process
    /// against libdispatch itself (`layoutHolds`): a Dispatch whose class
    /// looks different only loses the shortcut. On Darwin, where Dispatch is
    /// different again, the shortcut is not built.
    @inlinable
    static var isUsable: Bool {
        // A C global, one load: see CPromisesSupport.h.
        let state = promises_direct_dispatch_get()
        return state == 0 ? checkUsable() : state == 1
    }

    /// Asks `layoutHolds` once and records the answer for `isUsable`.
    @usableFromInline
    @inline(never)
    static func checkUsable() -> Bool {
        #if canImport(CDispatch)
        let usable = layoutHolds
        #else
        let usable = false
        #endif
        promises_direct_dispatch_set(usable ? 1 : 2)
        return usable
    }

    /// The first word after the Swift object header of `queue` (a
    /// `DispatchQueue`; only meaningful where `isUsable`).
    @inlinable
    static func wrapped(_ queue: AnyObject) -> OpaquePointer? {
        Unmanaged.passUnretained(queue).toOpaque().load(fromByteOffset: 16, as: OpaquePointer?.self)
    }

    #if canImport(CDispatch)
    /// Whether `wrapped` reads a queue's C queue: inside a `sync` on a new
    /// queue, libdispatch's current queue must be the word `wrapped` reads.
    /// Only pointers are compared; nothing read is followed.
    @usableFromInline
    static let layoutHolds: Bool = {
        let probe = DispatchQueue(label: "Promises.layout-probe")
        let read = wrapped(probe)
        var current: OpaquePointer?
        probe.sync { current = dispatch_get_current_queue() }
        return read != nil && read == current
    }()
    #endif

    /// Queues `work` on `queue` (from `wrapped`), which calls its `run()`.
    /// Dispatch holds a bare pointer: the caller keeps `work` alive until
    /// `run()` has been called.
    @usableFromInline
    static func enqueue(_ work: QueueWork, on queue: OpaquePointer) {
        #if canImport(CDispatch)
        dispatch_async_f(queue, Unmanaged.passUnretained(work).toOpaque()) { context in
            // Without a retain: `run()` keeps the work alive itself for as
            // long as it needs it (a `StepBox` holds itself until `run()`
            // takes that hold, and lets go only when its step is done). A
            // retain here would make the box look shared to its own step,
            // which then could not seal it without the lock.
            Unmanaged<QueueWork>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.run() }
        }
        #else
        preconditionFailure("DirectDispatch.enqueue where DirectDispatch.isUsable is false")
        #endif
    }
}
