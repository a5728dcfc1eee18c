import Dispatch

/// One operator's work on a value: the body, the queue it runs on, and — once
/// the value is there — the value. Kept in the `StepBox` of the promise the
/// operator returns.
@usableFromInline
protocol Step: SendableMetatype {
    /// The value the body takes.
    associatedtype Input
    /// What the step's box is sealed with (`Result<U>` for a promise).
    associatedtype Sealed

    /// Where the body runs, and the value once it arrives.
    var hop: Hop<Input> { get set }

    /// Takes the body (so that what it captured is released once it has
    /// run, as when a handler is dropped) and runs it with `input`; seals
    /// `box`, now or later.
    mutating func run(_ input: Input, sealing box: EmptyBox<Sealant<Sealed>>)

    /// Drops the body unrun (the value never came: a rejection passed by).
    mutating func drop()
}

/// The pending box of a promise an operator returns, holding the operator's
/// `Step` too.
///
/// Written out plainly, an operator's hop costs two closure contexts: the
/// handler added to the source (capturing body, queue, flags and the result
/// box) and the work sent to the queue (capturing body, value and box). A
/// closure whose only capture is one object uses that object as its context
/// and allocates none, so both closures here capture just this box. And the
/// box goes to the queue itself, through `DirectDispatch`, not wrapped in a
/// block: a hop allocates the promise and this box, where written out
/// plainly it would allocate five objects (the promise, its box, the two
/// closure contexts and Dispatch's block).
///
/// The step is stored as one field of the class's own generic type, so that
/// the deinitializer destroys it with metadata the class carries (see
/// `EmptyBox`) rather than looking up, say, `Optional<Input>` at run time.
///
/// Thread safety: `step` and `queued` are written when the box is made
/// (before it is shared), by the source's handler (which runs once) and by
/// the work that handler starts (after it, through Dispatch or on the same
/// thread) — never by two threads at once, so they need no lock.
@usableFromInline
final class StepBox<S: Step>: EmptyBox<Sealant<S.Sealed>>, @unchecked Sendable {
    @usableFromInline
    @exclusivity(unchecked)
    var step: S

    /// While the box waits on a queue it was handed to by `DirectDispatch`:
    /// the call that runs the step. Dispatch holds a bare pointer to the box;
    /// this closure holds the box itself, so the box lives until the queue
    /// has run it. Made by specialised code (see `run()`).
    @usableFromInline
    @exclusivity(unchecked)
    var queued: (() -> Void)?

    @inlinable
    init(_ step: consuming S) {
        self.step = step
        super.init()
    }

    /// Called by the queue `DirectDispatch` handed the box to. It is reached
    /// through the class's method table, so it is the generic, unspecialised
    /// code, where each step of a hop would cost metadata lookups (~3,800
    /// instructions a hop, measured); it only calls the closure that
    /// specialised code stored in `queued`. Taking the closure out ends the
    /// box's hold on itself. (`guard let`, not `unsafelyUnwrapped`: that
    /// generic accessor makes this code wrap the closure in a thunk — an
    /// allocation per hop.)
    @usableFromInline
    override func run() {
        guard let work = queued else { preconditionFailure("Promises: a queued box ran twice") }
        queued = nil
        work()
    }

    /// The handler for the source's value: runs the step, on its queue.
    @inlinable
    func receive(_ value: S.Input) {
        step.hop.input = value
        start()
    }

    /// Runs the step, on its queue, with the value already in `step.hop`.
    @inlinable
    func start() {
        // Without flags, the box itself goes to the queue (no block); with
        // flags, or where `DirectDispatch` cannot be used, a block. The C
        // queue is read with the step's queue borrowed, not copied out —
        // which holds only if nothing is called between reading the queue
        // and using it, hence `isUsable` (a load) first.
        if step.hop.flags == 0, DirectDispatch.isUsable, let cQueue = step.hop.target.directQueue {
            queued = { self.fire() }
            DirectDispatch.enqueue(self, on: cQueue)
            return
        }
        if let queue = step.hop.target.queue {
            // The box is `Sendable`, so this closure is too: no cast (see
            // `DispatchQueue.dispatch`), and its context is the box itself.
            queue.async(flags: DispatchWorkItemFlags(rawValue: step.hop.flags)) { self.fire() }
        } else {
            fire()
        }
    }

    /// Runs the body with the stored value.
    @inlinable
    func fire() {
        let input = step.hop.input.take().unsafelyUnwrapped
        step.run(input, sealing: self)
    }

    /// Seals the box with `value` without running the body.
    @inlinable
    func pass(_ value: S.Sealed) {
        step.drop()
        settle(value)
    }
}

/// `map`'s step: seals the box with the transform's result.
@usableFromInline
struct MapStep<T, U>: Step {
    @usableFromInline
    var transform: ((T) throws -> U)?
    @usableFromInline
    var hop: Hop<T>

    @inlinable
    init(queue: DispatchQueue?, flags: DispatchWorkItemFlags?, transform: @escaping (T) throws -> U) {
        self.transform = transform
        hop = Hop(queue: queue, flags: flags)
    }

    @inlinable
    mutating func run(_ input: T, sealing box: EmptyBox<Sealant<Result<U>>>) {
        guard let transform = self.transform else { preconditionFailure("Promises: a step ran twice") }
        self.transform = nil
        do {
            box.settle(.fulfilled(try transform(input)))
        } catch {
            box.settle(.rejected(error))
        }
    }

    @inlinable
    mutating func drop() {
        transform = nil
    }
}

/// `done`'s step: runs the body, seals the box with `()`.
///
/// Not `MapStep<T, Void>`: passing a `(T) throws -> Void` body where a
/// `(T) throws -> U` is stored costs a reabstraction thunk, which is an
/// allocation and ~1,000 instructions per promise (measured with callgrind).
@usableFromInline
struct DoneStep<T>: Step {
    @usableFromInline
    var body: ((T) throws -> Void)?
    @usableFromInline
    var hop: Hop<T>

    @inlinable
    init(queue: DispatchQueue?, flags: DispatchWorkItemFlags?, body: @escaping (T) throws -> Void) {
        self.body = body
        hop = Hop(queue: queue, flags: flags)
    }

    @inlinable
    mutating func run(_ input: T, sealing box: EmptyBox<Sealant<Result<Void>>>) {
        guard let body = self.body else { preconditionFailure("Promises: a step ran twice") }
        self.body = nil
        do {
            try body(input)
            box.settle(.fulfilled(()))
        } catch {
            box.settle(.rejected(error))
        }
    }

    @inlinable
    mutating func drop() {
        body = nil
    }
}

/// `then`'s step: seals the box as the thenable the body returns resolves.
@usableFromInline
struct ThenStep<T, U: Thenable>: Step {
    @usableFromInline
    var body: ((T) throws -> U)?
    @usableFromInline
    var hop: Hop<T>

    @inlinable
    init(queue: DispatchQueue?, flags: DispatchWorkItemFlags?, body: @escaping (T) throws -> U) {
        self.body = body
        hop = Hop(queue: queue, flags: flags)
    }

    @inlinable
    mutating func run(_ input: T, sealing box: EmptyBox<Sealant<Result<U.T>>>) {
        guard let body = self.body else { preconditionFailure("Promises: a step ran twice") }
        self.body = nil
        do {
            let rv = try body(input)
            // A body returning the very promise `then` returned would wait
            // for itself forever.
            if let promise = rv as? Promise<U.T>, promise.box === box {
                throw PMKError.returnedSelf
            }
            rv.pipe { box.settle($0) }
        } catch {
            box.settle(.rejected(error))
        }
    }

    @inlinable
    mutating func drop() {
        body = nil
    }
}

extension Thenable {
    /// The box of the promise an operator returns: it runs `step` with this
    /// thenable's value once there is one, or passes a rejection on.
    @inlinable
    func chainBox<S: Step, U>(_ step: consuming S) -> Box<Result<U>> where S.Input == T, S.Sealed == Result<U> {
        let box = StepBox(step)
        if let result = sealedResult {
            // Already resolved: no handler to store.
            box.take(result)
        } else if let promise = self as? Promise<T> {
            // Straight to the box, which takes the handler as it is (the
            // protocol's `pipe(to:)` borrows it, and storing it then costs
            // a retain and a release more).
            // Not born resolved, so it has a box (`?.` borrows it; `if let`
            // would copy it: a retain and a release).
            promise.box?.pipe { box.take($0) }
        } else {
            pipe { box.take($0) }
        }
        return box
    }
}

extension StepBox {
    /// The handler for a promise's result: runs the step with a value,
    /// passes a rejection on.
    @inlinable
    func take<U>(_ result: Result<S.Input>) where S.Sealed == Result<U> {
        switch result {
        case .fulfilled(let value):
            receive(value)
        case .rejected(let error):
            pass(.rejected(error))
        }
    }
}

/// What every `Step` keeps beside its body: where the body runs and, from
/// when it arrives until the body takes it, the value. After the body (16
/// bytes), this keeps the box of a small `Input` in a 96-byte malloc chunk.
@usableFromInline
struct Hop<Input> {
    /// Where the body runs.
    @usableFromInline
    let target: QueueReference
    /// The `DispatchWorkItemFlags`' raw value (nil is `[]`, which Dispatch
    /// treats alike). Stored raw: Dispatch's own struct is resilient, so
    /// every copy of it goes through a value witness.
    @usableFromInline
    let flags: UInt
    @usableFromInline
    var input: Input?

    @inlinable
    init(queue: DispatchQueue?, flags: DispatchWorkItemFlags?) {
        target = QueueReference(queue)
        self.flags = flags?.rawValue ?? 0
    }
}

/// A `DispatchQueue?` that copies as cheaply as any class reference.
///
/// Copying a `DispatchQueue?` itself goes through `Optional`'s generic value
/// witness with run-time metadata (~100 instructions; Dispatch is a
/// resilient module), and a step's queue is copied at least once a hop.
@usableFromInline
struct QueueReference {
    @usableFromInline
    let object: AnyObject?

    @inlinable
    init(_ queue: DispatchQueue?) {
        object = queue
    }

    /// The libdispatch queue to hand a box to, or nil to run inline. Only
    /// where `DirectDispatch.isUsable`.
    @inlinable
    var directQueue: OpaquePointer? {
        guard let object else { return nil }
        return DirectDispatch.wrapped(object)
    }

    /// The queue; nil runs the step inline.
    @inlinable
    var queue: DispatchQueue? {
        guard let object else { return nil }
        return unsafeDowncast(object, to: DispatchQueue.self)
    }
}
