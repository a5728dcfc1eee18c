import CPromisesSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs sealed boxes' handlers without letting the stack grow with the
/// length of a chain.
///
/// Sealing a box runs its handlers; a handler that runs inline (`on: nil`, or
/// `pipe`) typically seals the next box, which runs *its* handlers, and so
/// on: a 100,000-hop chain built on a pending promise would recurse 100,000
/// times and overflow the stack (PromiseKit issue #1047). Here each thread
/// counts how deep it is in handler calls; past `maxDepth` a seal does not
/// recurse but queues its handlers, and the outermost seal on the thread runs
/// the queue in a loop — the iterative drain swift-nio's `EventLoopFuture`
/// uses for `flatMap` chains.
///
/// Order: handlers of one box always run in the order they were added. Below
/// `maxDepth` a nested seal runs its handlers at once (depth first, like
/// PromiseKit); past it they run after the handler that sealed the box
/// returns. A seal makes the value visible at once either way: only the
/// callbacks are postponed.
@usableFromInline
enum Trampoline {
    /// Nested handler calls allowed on one thread before handlers are queued.
    /// Each level costs a few hundred bytes of stack.
    @usableFromInline
    static let maxDepth = 32

    @inlinable
    static func run<R>(_ handlers: consuming Handlers<R>, with value: R) {
        let state = enter()
        if let state {
            handlers.callAll(with: value)
            leave(state)
        } else {
            // A consuming parameter cannot be captured, nor a captured
            // constant consumed: hand the closure a copy, and consume a
            // copy of that.
            let later = copy handlers
            postpone {
                let bodies = later
                bodies.callAll(with: value)
            }
        }
    }

    /// Counts one level deeper and returns this thread's state if a handler
    /// may run now; nil if it must be postponed.
    @usableFromInline
    static func enter() -> Unmanaged<ThreadDrainState>? {
        let unmanaged = ThreadDrainState.current
        return unmanaged._withUnsafeGuaranteedRef { state in
            guard state.depth < maxDepth else { return nil }
            state.depth += 1
            return unmanaged
        }
    }

    /// Leaves a level; the outermost level runs whatever was postponed.
    @usableFromInline
    static func leave(_ unmanaged: Unmanaged<ThreadDrainState>) {
        unmanaged._withUnsafeGuaranteedRef { state in
            state.depth -= 1
            if state.depth == 0, state.head < state.postponed.count {
                state.drain()
            }
        }
    }

    /// Runs, now, the handlers this thread has postponed, however deep in
    /// handler calls it is. For `wait()`: the thread is about to block, and
    /// what it waits for may need them.
    static func runPostponed() {
        ThreadDrainState.current._withUnsafeGuaranteedRef { state in
            // At `maxDepth`, anything this work seals is postponed again and
            // run by the same loop: no recursion.
            state.runQueue(atDepth: maxDepth)
        }
    }

    @usableFromInline
    static func postpone(_ work: @escaping () -> Void) {
        ThreadDrainState.current._withUnsafeGuaranteedRef { $0.postponed.append(work) }
    }
}

/// One per thread that has run handlers; reached through a pthread key and
/// freed when the thread exits. Only its own thread touches it.
@usableFromInline
final class ThreadDrainState {
    // Only this thread touches these fields, so the runtime's dynamic
    // exclusivity checks are switched off.
    @exclusivity(unchecked)
    var depth = 0
    @exclusivity(unchecked)
    var postponed: [() -> Void] = []

    /// Where the promise was made whose leak this thread is reporting.
    @exclusivity(unchecked)
    var leakLocation: PMKSourceLocation?

    /// Runs `body` with `location` as the leak this thread reports.
    static func reportingLeak(at location: PMKSourceLocation, _ body: () -> Void) {
        current._withUnsafeGuaranteedRef { state in
            let outer = state.leakLocation
            state.leakLocation = location
            body()
            state.leakLocation = outer
        }
    }

    /// The location of the leak this thread is reporting, if any.
    static var leakBeingReported: PMKSourceLocation? {
        current._withUnsafeGuaranteedRef { $0.leakLocation }
    }

    /// One remembered call site: `file`'s address, `line`, its id.
    @usableFromInline
    struct RecentLocation {
        @usableFromInline var address: UInt
        @usableFromInline var line: UInt
        @usableFromInline var id: UInt32
    }

    /// How many call sites a thread remembers (a power of two).
    @usableFromInline
    static let recentLocationCount = 16

    /// Recently seen call sites → `LocationTable` ids, so making promises in
    /// a loop hashes nothing and takes no global lock. A fixed block rather
    /// than an array: the slot index is masked into range, so no bounds or
    /// uniqueness check is needed on the way.
    @usableFromInline
    let recentLocations: UnsafeMutablePointer<RecentLocation> = {
        let slots = UnsafeMutablePointer<RecentLocation>.allocate(capacity: recentLocationCount)
        slots.initialize(repeating: RecentLocation(address: 0, line: 0, id: 0), count: recentLocationCount)
        return slots
    }()

    /// Where `file:line` (`file` at `address`) is remembered.
    @inlinable
    static func slotIndex(address: UInt, line: UInt) -> Int {
        Int(truncatingIfNeeded: (address >> 3) ^ line) & (recentLocationCount - 1)
    }

    deinit {
        recentLocations.deinitialize(count: Self.recentLocationCount)
        recentLocations.deallocate()
    }

    /// The `LocationTable` id of `file:line`, from this thread's cache when
    /// it can be. Inlined into the code that makes a promise, where a cache
    /// hit is a dozen instructions; everything else is out of line.
    @inlinable
    static func locationID(file: StaticString, line: UInt) -> UInt32 {
        guard file.hasPointerRepresentation else { return 0 }
        let address = UInt(bitPattern: file.utf8Start)
        if let pointer = promises_thread_state_get() {
            let slots = Unmanaged<ThreadDrainState>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.recentLocations }
            let slot = slots + slotIndex(address: address, line: line)
            if slot.pointee.address == address, slot.pointee.line == line {
                return slot.pointee.id
            }
        }
        return rememberLocation(file: file, line: line)
    }

    /// Looks `file:line` up in the `LocationTable` and keeps its id in this
    /// thread's cache (making the thread's state if it has none yet).
    @usableFromInline
    @inline(never)
    static func rememberLocation(file: StaticString, line: UInt) -> UInt32 {
        let address = UInt(bitPattern: file.utf8Start)
        let id = LocationTable.id(file: file, line: line)
        current._withUnsafeGuaranteedRef { state in
            state.recentLocations[slotIndex(address: address, line: line)] = RecentLocation(
                address: address, line: line, id: id)
        }
        return id
    }

    /// Index of the next postponed item to run. `drain()` and
    /// `Trampoline.runPostponed()` both advance it, so when one runs inside
    /// the other no item is run twice or skipped.
    @exclusivity(unchecked)
    var head = 0

    /// Runs postponed work in FIFO order until none is left, at `runDepth`
    /// (work may postpone more, which runs too).
    func runQueue(atDepth runDepth: Int) {
        let outer = depth
        while head < postponed.count {
            let work = postponed[head]
            head += 1
            depth = runDepth
            work()
        }
        depth = outer
        if head > 0 {
            postponed.removeAll(keepingCapacity: postponed.count <= 1024)
            head = 0
        }
    }

    /// Runs postponed work at depth 1; called by the outermost `leave`.
    func drain() {
        runQueue(atDepth: 1)
    }

    /// Frees a thread's state when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            // Runs on the exiting thread: anything it still does with
            // promises makes a new state (and glibc calls this again).
            promises_thread_state_set(nil)
            Unmanaged<ThreadDrainState>.fromOpaque(pointer).release()
        }
        precondition(status == 0, "Promises: pthread_key_create failed (\(status))")
        return key
    }()

    /// This thread's state, made on first use. Unmanaged: the thread owns
    /// it, so reaching it costs no retain or release. Kept in a C
    /// thread-local variable (a load), and under a pthread key only so that
    /// it is freed when the thread exits.
    static var current: Unmanaged<ThreadDrainState> {
        if let pointer = promises_thread_state_get() {
            return Unmanaged<ThreadDrainState>.fromOpaque(pointer)
        }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> Unmanaged<ThreadDrainState> {
        let state = Unmanaged.passRetained(ThreadDrainState())
        promises_thread_state_set(state.toOpaque())
        pthread_setspecific(key, state.toOpaque())
        return state
    }
}
