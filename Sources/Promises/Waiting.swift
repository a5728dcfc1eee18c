import Dispatch
import Foundation
import Synchronization

extension Promise {
    /// Blocks the calling thread until the promise resolves; returns the
    /// value or throws the error. Never call it on the queue the promise's
    /// resolution needs (by default `conf.Q.map` / `conf.Q.return`): that
    /// deadlocks, as `wait()` on the main queue does in PromiseKit. Inline
    /// handlers this thread postponed (see `Trampoline`) run first, so a
    /// `wait()` deep inside a chain of inline handlers does not wait on work
    /// only this thread could do.
    public func wait() throws -> T {
        warnIfMainThread()
        let result: Result<T>
        if let resolved = self.result {
            result = resolved
        } else {
            let slot = WaitSlot<Result<T>>()
            pipe { slot.put($0) }
            Trampoline.runPostponed()
            result = slot.take()
        }
        switch result {
        case .fulfilled(let value): return value
        case .rejected(let error): throw error
        }
    }

    /// Suspends until the promise resolves; returns the value or throws the
    /// error. Blocks no thread.
    public func async() async throws -> T {
        let transfer = try await withUnsafeThrowingContinuation {
            (continuation: UnsafeContinuation<UncheckedSendable<T>, any Error>) in
            pipe { result in
                switch result {
                case .fulfilled(let value): continuation.resume(returning: UncheckedSendable(value))
                case .rejected(let error): continuation.resume(throwing: error)
                }
            }
        }
        return transfer.value
    }
}

/// Logs `.waitOnMainThread` when called on the main thread.
@usableFromInline
func warnIfMainThread() {
    if Thread.isMainThread {
        conf.logHandler(.waitOnMainThread)
    }
}

/// Hands one value from the thread that resolves to the thread that waits.
@usableFromInline
final class WaitSlot<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is written once before `signal()` and read
    // after `wait()` returns; the semaphore orders the two.
    private var value: Value?
    private let semaphore = DispatchSemaphore(value: 0)

    @usableFromInline
    init() {}

    @usableFromInline
    func put(_ value: Value) {
        self.value = value
        semaphore.signal()
    }

    @usableFromInline
    func take() -> Value {
        semaphore.wait()
        return value.unsafelyUnwrapped
    }
}

/// Namespaces `DispatchQueue.async(.promise)`.
public enum PMKNamespacer {
    case promise
}

extension DispatchQueue {
    /// Runs `body` on this queue and returns a promise of its result; a
    /// thrown error rejects.
    public func async<T>(
        _: PMKNamespacer, group: DispatchGroup? = nil, qos: DispatchQoS = .default, flags: DispatchWorkItemFlags = [],
        execute body: @escaping () throws -> T
    ) -> Promise<T> {
        let (promise, box) = Promise<T>.makePending()
        let work = UncheckedSendable((body, box))
        async(group: group, qos: qos, flags: flags) {
            do {
                work.value.1.settle(.fulfilled(try work.value.0()))
            } catch {
                work.value.1.settle(.rejected(error))
            }
        }
        return promise
    }

    /// Runs `body` on this queue and returns a guarantee of its result.
    public func async<T>(
        _: PMKNamespacer, group: DispatchGroup? = nil, qos: DispatchQoS = .default, flags: DispatchWorkItemFlags = [],
        execute body: @escaping () -> T
    ) -> Guarantee<T> {
        let (guarantee, box) = Guarantee<T>.makePending()
        let work = UncheckedSendable((body, box))
        async(group: group, qos: qos, flags: flags) {
            work.value.1.settle(work.value.0())
        }
        return guarantee
    }
}

/// Blocks until `promise` resolves, for command-line tools: on the main
/// thread it keeps the main run loop turning meanwhile (so work scheduled
/// there still runs); elsewhere it is `wait()`.
public func hang<T>(_ promise: Promise<T>) throws -> T {
    guard Thread.isMainThread else {
        return try promise.wait()
    }
    while true {
        switch promise.result {
        case .fulfilled(let value)?:
            return value
        case .rejected(let error)?:
            throw error
        case nil:
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
        }
    }
}
