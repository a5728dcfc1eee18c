import Dispatch
import Testing

@testable import Promises

/// An error holding a `Tracked`, so a test can see when the last copy of
/// the error goes.
struct TrackedError: Error {
    let tracked: Tracked
}

/// Values of the layouts a promise born fulfilled may hold, each with a
/// number (7) to read back and a `Tracked` to see when it is freed.
/// A promise holds a value of two words or less that is bitwise takable
/// itself (`InlineValue`); any other value goes in a box.
struct PairValue {  // two words, not trivial: held by the promise
    let tracked: Tracked
    let number: Int
}

struct WideValue {  // three words: in a box
    let tracked: Tracked
    let number: Int
    let more = 0
}

struct WeaklyHeldValue {  // two words, but a weak reference is not bitwise takable: in a box
    let tracked: Tracked
    weak var other: Tracked?
    var number: Int { 7 }
}

/// Promises born resolved — `Promise.value(_:)`, `Promise(error:)`,
/// `Promise()`, and `map(on: nil)` on a resolved promise — are built
/// differently from pending ones (one object holding its result, or a
/// promise around a sealed box). Whatever the build, every reader must see
/// the same result, and the result must be freed with the promise.
@Suite("Born resolved: value(_:), init(error:) and map(on: nil) on a resolved promise")
struct BornResolvedTests {
    /// The ways of making a promise born resolved, with the result each must
    /// have: a value of 7, or `TestError.first`.
    static let makers: [(name: String, fulfilled: Bool, make: @Sendable () -> Promise<Int>)] = [
        ("value", true, { Promise.value(7) }),
        ("init(error:)", false, { Promise(error: TestError.first) }),
        ("map(on: nil) of a value", true, { Promise.value(3).map(on: nil) { $0 + 4 } }),
        ("map(on: nil) that throws", false, { Promise.value(3).map(on: nil) { _ in throw TestError.first } }),
        ("map(on: nil) of a rejection", false, { Promise<Int>(error: TestError.first).map(on: nil) { $0 + 1 } }),
        ("map(on: nil) of a map", true, { Promise.value(1).map(on: nil) { $0 + 1 }.map(on: nil) { $0 + 5 } }),
        ("compactMap(on: nil)", true, { Promise.value("7").compactMap(on: nil) { Int($0) } }),
        (
            "compactMap(on: nil) of nil", false,
            {
                Promise.value("x").compactMap(on: nil) { Int($0) }.recover(on: nil) { _ -> Promise<Int> in
                    throw TestError.first
                }
            }
        ),
    ]

    @Test("every reader sees the result", arguments: 0..<makers.count)
    func readers(index: Int) async throws {
        let (name, fulfilled, make) = Self.makers[index]
        let promise = make()
        #expect(promise.isResolved, "\(name)")
        #expect(!promise.isPending, "\(name)")
        #expect(promise.isFulfilled == fulfilled, "\(name)")
        #expect(promise.isRejected == !fulfilled, "\(name)")
        if fulfilled {
            #expect(promise.value == 7, "\(name)")
            #expect(promise.error == nil, "\(name)")
            #expect(try promise.wait() == 7, "\(name)")
            #expect(try await promise.async() == 7, "\(name)")
            #expect(promise.description == "Promise(7)", "\(name)")
        } else {
            #expect(promise.value == nil, "\(name)")
            #expect(promise.error as? TestError == .first, "\(name)")
            #expect(throws: TestError.first) { try promise.wait() }
            await #expect(throws: TestError.first) { try await promise.async() }
            #expect(promise.description == "Promise(first)", "\(name)")
        }
        // `pipe` calls its body at once, exactly once, on this thread.
        var piped: [Promises.Result<Int>] = []
        promise.pipe { piped.append($0) }
        #expect(piped.count == 1, "\(name)")
        if case .fulfilled(let value)? = piped.first {
            #expect(fulfilled && value == 7, "\(name)")
        } else {
            #expect(!fulfilled, "\(name)")
        }
    }

    @Test("operators chained off it, inline and on a queue, see the result", arguments: 0..<makers.count)
    func chained(index: Int) async throws {
        let (name, fulfilled, make) = Self.makers[index]
        let queue = QueueTag.queue("born-resolved")
        for target in [nil, queue] {
            let mapped = await make().map(on: target) { $0 * 2 }.outcome()
            let thenned = await make().then(on: target) { Promise.value($0 * 3) }.outcome()
            let recovered = await make().recover(on: target) { _ in Promise.value(-1) }.outcome()
            let ensured = await make().ensure(on: target) {}.outcome()
            let tapped = await make().tap(on: target) { _ in }.outcome()
            let joined: Promise<[Int]> = when(fulfilled: [make(), Promise.value(1)])
            let joinedOutcome = await joined.outcome()
            if fulfilled {
                #expect(mapped?.value == 14, "\(name)")
                #expect(thenned?.value == 21, "\(name)")
                #expect(recovered?.value == 7, "\(name)")
                #expect(ensured?.value == 7, "\(name)")
                #expect(tapped?.value == 7, "\(name)")
                #expect(joinedOutcome?.value == [7, 1], "\(name)")
            } else {
                #expect(mapped?.error as? TestError == .first, "\(name)")
                #expect(thenned?.error as? TestError == .first, "\(name)")
                #expect(recovered?.value == -1, "\(name)")
                #expect(ensured?.error as? TestError == .first, "\(name)")
                #expect(tapped?.error as? TestError == .first, "\(name)")
                #expect(joinedOutcome?.error as? TestError == .first, "\(name)")
            }
        }
    }

    @Test("a Promise<Void> born fulfilled: Promise() and Promise.value")
    func void() throws {
        for promise in [Promise(), Promise<Void>.value, Promise.value(()), Promise.value(1).asVoid()] {
            #expect(promise.isFulfilled)
            try promise.wait()
        }
    }

    @Test("its error is freed with it, not before (values: see the layouts test)")
    func errorFreed() {
        let alive = Counter()
        var errors: [Promise<Int>]? = [
            Promise(error: TrackedError(tracked: Tracked(alive))),
            Promise.value(1).map(on: nil) { _ in throw TrackedError(tracked: Tracked(alive)) },
            Promise<Int>(error: TrackedError(tracked: Tracked(alive))).map(on: nil) { $0 },
        ]
        #expect(alive.value == 3)
        // Readers copy the error out; the promise keeps its own.
        #expect(errors?.allSatisfy { $0.error is TrackedError } == true)
        #expect(alive.value == 3)
        errors = nil
        #expect(alive.value == 0)
    }

    @Test("values of every layout, held by the promise or in a box, are read and freed alike")
    func layouts() async throws {
        let alive = Counter()
        try await checkLayout(alive, heldByPromise: true, { Tracked(alive) }, number: { _ in 7 })
        try await checkLayout(alive, heldByPromise: true, { Optional(Tracked(alive)) }, number: { _ in 7 })
        try await checkLayout(
            alive, heldByPromise: true, { PairValue(tracked: Tracked(alive), number: 7) }, number: \.number)
        try await checkLayout(
            alive, heldByPromise: false, { WideValue(tracked: Tracked(alive), number: 7) }, number: \.number)
        try await checkLayout(
            alive, heldByPromise: false, { WeaklyHeldValue(tracked: Tracked(alive), other: nil) }, number: \.number)
        try await checkLayout(alive, heldByPromise: true, { (Tracked(alive), 7) }, number: \.1)
        try await checkLayout(alive, heldByPromise: false, { (Tracked(alive), 7, 0) }, number: \.1)
        try await checkLayout(alive, heldByPromise: true, { _ = Tracked(alive) }, number: { _ in 7 })
    }

    /// Makes promises born fulfilled with a `make()` value, as `value(_:)`
    /// and `map(on: nil)` do, and checks where the value is kept, that every
    /// reader gets it, and that it lives exactly as long as the promise.
    /// Generic, so that the library's unspecialised code runs too.
    private func checkLayout<V>(
        _ alive: Counter, heldByPromise: Bool, _ make: @escaping @Sendable () -> V,
        number: @escaping @Sendable (V) -> Int
    ) async throws {
        let type = "\(V.self)"
        let before = alive.value
        let queue = QueueTag.queue("layouts")
        var promises: [Promise<V>]? = [Promise.value(make()), Promise.value(1).map(on: nil) { _ in make() }]
        // Each value holds one `Tracked`, but `()`, whose `make` frees its own.
        let made = V.self == Void.self ? 0 : 2
        #expect(alive.value == before + made, "\(type)")
        for promise in promises ?? [] {
            #expect((promise.box == nil) == heldByPromise, "\(type)")
            #expect(promise.isFulfilled, "\(type)")
            #expect(promise.value.map(number) == 7, "\(type)")
            #expect(number(try promise.wait()) == 7, "\(type)")
            #expect(number(try await promise.async()) == 7, "\(type)")
            #expect(try promise.map(on: nil, number).wait() == 7, "\(type)")
            #expect(try promise.map(on: queue, number).wait() == 7, "\(type)")
            // `wait` can return before the queue's block has let its copy go.
            queue.sync {}
            #expect(try promise.then(on: nil) { Promise.value(number($0)) }.wait() == 7, "\(type)")
            var piped = 0
            promise.pipe { if case .fulfilled(let value) = $0 { piped += number(value) } }
            #expect(piped == 7, "\(type)")
        }
        // The readers' copies are gone; the promises still hold theirs.
        #expect(alive.value == before + made, "\(type)")
        promises = nil
        #expect(alive.value == before, "\(type)")
    }

    @Test("many threads read and chain off one at once")
    func sharedAcrossThreads() async {
        let shared = Promise.value(1).map(on: nil) { $0 + 1 }
        let sum = Counter()
        let group = DispatchGroup()
        for _ in 0..<8 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<500 {
                    if shared.value == 2 { sum.increment() }
                    _ = shared.map(on: nil) { $0 }.done(on: nil) { _ in sum.increment() }
                }
            }
        }
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
        #expect(sum.value == 8 * 500 * 2)
    }
}

private extension Promises.Result {
    var value: T? {
        if case .fulfilled(let value) = self { return value }
        return nil
    }

    var error: (any Error)? {
        if case .rejected(let error) = self { return error }
        return nil
    }
}
