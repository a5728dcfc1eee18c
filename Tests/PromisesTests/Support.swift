import Dispatch
import Foundation
import Promises
import Synchronization
import Testing

// Helpers shared by the suites. Nothing here asserts on timing: waits are
// bounded only so that a promise a bug leaves pending fails its test instead
// of hanging the whole run.

/// Errors the tests reject with.
enum TestError: Error, Equatable {
    case first
    case second
    case numbered(Int)
}

/// An error that says it means "cancelled", the way a client's own error type would.
struct ClientCancelled: CancellableError {
    var isCancelled: Bool { true }
}

/// An error of a `CancellableError` type that does not mean "cancelled".
struct ClientFailure: CancellableError {
    var isCancelled: Bool { false }
}

/// A value behind a lock ThreadSanitizer can see. The tests use it rather
/// than `Synchronization.Mutex`, whose locking TSan does not see on Linux
/// (its acquire is not instrumented), so that a TSan report points at the
/// library, never at the tests' own bookkeeping.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched inside `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// `withCheckedContinuation`, with the hand-off also shown to
/// ThreadSanitizer. On Linux TSan does not always see a checked
/// continuation's resume as ordering what the resuming thread did before it
/// and what the task does after the `await`: a field written in a
/// `DispatchQueue.global()` block before `resume()` and read after the
/// `await` was reported as a race in 8 of 20 runs of 300 rounds (Swift
/// 6.3.1; no Promises code involved). So both sides also pass through one
/// lock TSan sees: `body` gets a `resume` that takes it first, and the task
/// takes it once resumed.
func awaitHandOff<T: Sendable>(_ body: (_ resume: @escaping @Sendable (T) -> Void) -> Void) async -> T {
    // A Bool, not Void: TSan takes an inout access to a zero-sized value
    // for one to the field that follows it (see the library's TSan.swift).
    let resumed = Locked(false)
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        body { value in
            resumed.withLock { $0 = true }
            continuation.resume(returning: value)
        }
    }
    _ = resumed.withLock { $0 }
    return value
}

/// Carries a value across a continuation; the tests own the ordering.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
}

/// Values recorded from any thread, in the order they arrived.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])

    func append(_ item: Element) {
        items.withLock { $0.append(item) }
    }

    var all: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// A counter any thread may bump.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    @discardableResult
    func increment() -> Int {
        storage.add(1, ordering: .relaxed).newValue
    }

    func decrement() {
        storage.subtract(1, ordering: .relaxed)
    }

    var value: Int { storage.load(ordering: .relaxed) }
}

/// Keeps the highest value a running count reached.
final class HighWater: Sendable {
    private let state = Locked<(current: Int, highest: Int)>((0, 0))

    func enter() {
        state.withLock {
            $0.current += 1
            $0.highest = max($0.highest, $0.current)
        }
    }

    func leave() {
        state.withLock { $0.current -= 1 }
    }

    var highest: Int { state.withLock { $0.highest } }
}

/// True once, for the first caller.
final class Once: Sendable {
    private let claimed = Atomic<Bool>(false)

    func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}

/// Serial queues that can tell, from inside, which of them runs the code.
enum QueueTag {
    static let key = DispatchSpecificKey<String>()

    /// A new serial queue tagged `name`.
    static func queue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: "PromisesTests.\(name)")
        queue.setSpecific(key: key, value: name)
        return queue
    }

    /// The library's default queue, tagged so tests can recognise it.
    static let defaultQueue: DispatchQueue = {
        PMKConfiguration.defaultQueue.setSpecific(key: key, value: "Promises.default")
        return PMKConfiguration.defaultQueue
    }()

    /// The tag of the queue running the caller, or nil.
    static var current: String? {
        DispatchQueue.getSpecific(key: key)
    }
}

/// How long a test waits for a promise before calling it stuck.
let settleLimit: DispatchTimeInterval = .seconds(60)

extension Thenable {
    /// The outcome, waited for without blocking a thread; nil, with an issue
    /// recorded, if there was none within `settleLimit`.
    func outcome(sourceLocation: Testing.SourceLocation = #_sourceLocation) async -> Promises.Result<T>? {
        let once = Once()
        let got = await awaitHandOff { (resume: @escaping @Sendable (Unchecked<Promises.Result<T>?>) -> Void) in
            pipe { result in
                if once.claim() { resume(Unchecked(value: result)) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + settleLimit) {
                if once.claim() { resume(Unchecked(value: nil)) }
            }
        }
        if got.value == nil {
            Issue.record("still pending after \(settleLimit)", sourceLocation: sourceLocation)
        }
        return got.value
    }

    /// The value; an issue, and a thrown error, if it rejected or stayed pending.
    func fulfilledValue(sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws -> T {
        let result = try #require(await outcome(sourceLocation: sourceLocation), sourceLocation: sourceLocation)
        switch result {
        case .fulfilled(let value):
            return value
        case .rejected(let error):
            Issue.record("rejected with \(error), expected a value", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The error; an issue, and a thrown error, if it fulfilled or stayed pending.
    func rejection(sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws -> any Error {
        let result = try #require(await outcome(sourceLocation: sourceLocation), sourceLocation: sourceLocation)
        switch result {
        case .fulfilled(let value):
            Issue.record("fulfilled with \(value), expected a rejection", sourceLocation: sourceLocation)
            throw TestError.second
        case .rejected(let error):
            return error
        }
    }
}

/// Waits until every block already submitted to `queue` has run.
func drain(_ queue: DispatchQueue) async {
    await awaitHandOff { resume in
        queue.async { resume(()) }
    }
}

/// Runs `body` with `conf.Q` set to `queues`, and puts the old queues back.
func withQueues<R>(
    _ queues: (map: DispatchQueue?, return: DispatchQueue?), _ body: () async throws -> R
) async rethrows -> R {
    let saved = conf.Q
    conf.Q = queues
    defer { conf.Q = saved }
    return try await body()
}

/// Tests that change or depend on the global `conf` (queues, catch policy,
/// log and leak handlers). They run one at a time; every other suite leaves
/// `conf` alone and never leaks a pending promise, so these can count events.
@Suite(.serialized)
enum GlobalConfiguration {}

/// Runs `first` and `second` on two fresh threads released together, and
/// returns when both have finished. Unlike `concurrentPerform`, which may
/// run both on one thread, the two sides can really overlap — what
/// ThreadSanitizer needs to see a missing hand-off.
func runTogether(_ first: @escaping @Sendable () -> Void, _ second: @escaping @Sendable () -> Void) {
    let start = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for side in [first, second] {
        finished.enter()
        Thread.detachNewThread {
            start.wait()
            side()
            finished.leave()
        }
    }
    start.signal()
    start.signal()
    finished.wait()
}
