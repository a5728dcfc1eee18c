import Dispatch

/// Carries a value across a `@Sendable` boundary the compiler cannot see is
/// safe. Used only where PromiseKit's contract puts the burden on the caller:
/// handler bodies and values move to the queue the caller chose, exactly as
/// they do in PromiseKit.
@usableFromInline
struct UncheckedSendable<Value>: @unchecked Sendable {
    @usableFromInline
    let value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}

extension DispatchQueue {
    /// Runs `body` on the queue. `body` need not be `@Sendable`: handler
    /// bodies go to the queue their caller chose, as in PromiseKit.
    @inlinable
    func dispatch(flags: DispatchWorkItemFlags?, _ body: @escaping () -> Void) {
        // `@Sendable` is a compile-time promise only; the promise itself is
        // PromiseKit's contract, stated above. The closure is made a block
        // here (Dispatch takes blocks) and the block cast: a block is one
        // object pointer, so the cast allocates nothing (it may retain the
        // block once). Casting the Swift closure instead goes through the
        // generic abstraction of `unsafeBitCast`, which costs two
        // reabstraction thunks — two allocations a hop.
        let block: @convention(block) () -> Void = body
        let work = unsafeBitCast(block, to: (@convention(block) @Sendable () -> Void).self)
        if let flags {
            async(flags: flags, execute: work)
        } else {
            async(execute: work)
        }
    }
}
