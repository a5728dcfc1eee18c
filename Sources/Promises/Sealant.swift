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

    /// How many bodies wait.
    var count: Int {
        switch storage {
        case .none: return 0
        case .one: return 1
        case .many(let list): return list.bodies.count
        }
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
