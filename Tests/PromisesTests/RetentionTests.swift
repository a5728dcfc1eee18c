import Dispatch
import Promises
import Testing

/// Counts its live instances, so a test can see when a handler's captures go.
final class Tracked: @unchecked Sendable {
    // @unchecked: `alive` is a `Counter`, which locks.
    let alive: Counter

    init(_ alive: Counter) {
        self.alive = alive
        _ = alive.increment()
    }

    deinit { alive.decrement() }
}

@Suite("Retention: a handler's captures go once it has run, as in PromiseKit")
struct RetentionTests {
    /// Runs `attach` with an object only its handler captures, then `settle`;
    /// returns how many such objects are alive while the promise `attach`
    /// returned still is.
    func aliveAfter<Returned: Thenable>(
        on queue: DispatchQueue?,
        _ attach: (Promise<Int>, Tracked) -> Returned,
        settle: (Resolver<Int>) -> Void
    ) async throws -> Int {
        let alive = Counter()
        let (source, resolver) = Promise<Int>.pending()
        var result: Returned? = attach(source, Tracked(alive))
        #expect(alive.value == 1)
        settle(resolver)
        _ = await result?.outcome()
        // The promise is sealed from inside the work item; let it return.
        if let queue { await drain(queue) }
        let count = alive.value
        withExtendedLifetime(result) {}
        result = nil
        return count
    }

    @Test("map, done and then release their body after it ran (inline and on a queue)", arguments: [true, false])
    func releasedAfterRunning(onQueue: Bool) async throws {
        let queue: DispatchQueue? = onQueue ? QueueTag.queue("retention") : nil
        let viaMap = try await aliveAfter(
            on: queue,
            { source, tracked in
                source.map(on: queue) { value in withExtendedLifetime(tracked) { value } }
            }, settle: { $0.fulfill(1) })
        let viaDone = try await aliveAfter(
            on: queue,
            { source, tracked in
                source.done(on: queue) { _ in withExtendedLifetime(tracked) {} }
            }, settle: { $0.fulfill(1) })
        let viaThen = try await aliveAfter(
            on: queue,
            { source, tracked in
                source.then(on: queue) { _ in withExtendedLifetime(tracked) { Promise() } }
            }, settle: { $0.fulfill(1) })
        #expect([viaMap, viaDone, viaThen] == [0, 0, 0])
    }

    @Test("a rejection passing by releases the body unrun")
    func releasedWhenRejected() async throws {
        let viaMap = try await aliveAfter(
            on: nil,
            { source, tracked in
                source.map(on: nil) { value in withExtendedLifetime(tracked) { value } }
            }, settle: { $0.reject(ClientFailure()) })
        let queue = QueueTag.queue("retention")
        let viaDone = try await aliveAfter(
            on: queue,
            { source, tracked in
                source.done(on: queue) { _ in withExtendedLifetime(tracked) {} }
            }, settle: { $0.reject(ClientFailure()) })
        #expect([viaMap, viaDone] == [0, 0])
    }
}
