import Dispatch
import Foundation
import Promises
import Testing

// Run these under `swift test --sanitize=thread` too: TSan checks the
// library's locking; the assertions check that no handler is lost or doubled.

/// Per-promise tallies, bumped from any thread.
final class Tallies: Sendable {
    private let counts: Locked<[Int]>
    private let values: Locked<[Set<Int>]>

    init(_ count: Int) {
        counts = Locked(Array(repeating: 0, count: count))
        values = Locked(Array(repeating: [], count: count))
    }

    func record(_ index: Int, value: Int) {
        counts.withLock { $0[index] += 1 }
        values.withLock { _ = $0[index].insert(value) }
    }

    var all: [Int] { counts.withLock { $0 } }
    var distinctValues: [Set<Int>] { values.withLock { $0 } }
}

@Suite("Concurrency stress")
struct ConcurrencyStressTests {
    @Test("many threads add handlers to and seal the same promises at once: each handler runs exactly once")
    func handlersAndSealsRace() async throws {
        let promiseCount = 200
        let threads = 32
        let handlersPerThread = 4
        let pairs = (0..<promiseCount).map { _ in Promise<Int>.pending() }
        let promises = Unchecked(value: pairs.map(\.promise))
        let resolvers = Unchecked(value: pairs.map(\.resolver))
        let tallies = Tallies(promiseCount)
        let queue = QueueTag.queue("stress")
        let tails = Locked<[Promise<Void>]>([])

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var mine: [Promise<Void>] = []
            for index in 0..<promiseCount {
                let promise = promises.value[index]
                for handler in 0..<handlersPerThread {
                    let on: DispatchQueue? = handler % 2 == 0 ? nil : queue
                    mine.append(promise.done(on: on) { tallies.record(index, value: $0) })
                }
                // Several threads race to seal each promise, with different values.
                if (index + thread) % 8 == 0 {
                    resolvers.value[index].fulfill(thread)
                }
            }
            tails.withLock { $0.append(contentsOf: mine) }
        }
        for resolver in resolvers.value { resolver.fulfill(-1) }
        let all = tails.withLock { $0 }
        try await when(fulfilled: all).fulfilledValue()

        #expect(tallies.all == Array(repeating: threads * handlersPerThread, count: promiseCount))
        for (index, seen) in tallies.distinctValues.enumerated() {
            #expect(seen.count == 1, "promise \(index)'s handlers saw different values: \(seen)")
            #expect(seen.first == promises.value[index].value)
        }
    }

    @Test("fulfil and reject race from many threads: every observer sees the one outcome that won")
    func fulfilRejectRace() async throws {
        for _ in 0..<50 {
            let (promise, resolver) = Promise<Int>.pending()
            let outcomes = Recorder<String>()
            DispatchQueue.concurrentPerform(iterations: 16) { thread in
                if thread % 2 == 0 {
                    resolver.fulfill(thread)
                } else {
                    resolver.reject(TestError.numbered(thread))
                }
                _ = promise.tap(on: nil) { outcomes.append("\($0)") }
            }
            let final = try #require(promise.result)
            #expect(Set(outcomes.all) == ["\(final)"])
            #expect(outcomes.count == 16)
        }
    }

    @Test("when over 5,000 promises fulfilled from many threads keeps the order")
    func whenOverThousands() async throws {
        let count = 5_000
        let pairs = (0..<count).map { _ in Promise<Int>.pending() }
        let resolvers = Unchecked(value: pairs.map(\.resolver))
        let all = when(fulfilled: pairs.map(\.promise))
        DispatchQueue.global().async {
            DispatchQueue.concurrentPerform(iterations: count) { index in
                resolvers.value[count - 1 - index].fulfill(count - 1 - index)
            }
        }
        #expect(try await all.fulfilledValue() == Array(0..<count))
    }

    @Test("when(resolved:) and race over thousands of promises settled from many threads")
    func resolvedAndRaceOverThousands() async throws {
        let count = 3_000
        let pairs = (0..<count).map { _ in Promise<Int>.pending() }
        let resolvers = Unchecked(value: pairs.map(\.resolver))
        let settled = when(resolved: pairs.map(\.promise))
        let first = race(pairs.map(\.promise))
        DispatchQueue.concurrentPerform(iterations: count) { index in
            if index % 3 == 0 {
                resolvers.value[index].reject(TestError.numbered(index))
            } else {
                resolvers.value[index].fulfill(index)
            }
        }
        _ = await settled.outcome()
        let results = settled.value ?? []
        #expect(results.count == count)
        #expect(results.enumerated().allSatisfy { index, result in result.isFulfilled == (index % 3 != 0) })
        #expect(await first.outcome() != nil)
    }

    @Test("many threads chain onto one promise while it is sealed: every chain ends with the value")
    func chainsDuringSeal() async throws {
        let (root, resolver) = Promise<Int>.pending()
        let tails = Locked<[Promise<Int>]>([])
        let resolverBox = Unchecked(value: resolver)
        DispatchQueue.concurrentPerform(iterations: 64) { thread in
            if thread == 32 { resolverBox.value.fulfill(10) }
            var tail = root.map(on: nil) { $0 }
            for _ in 0..<50 { tail = tail.map(on: nil) { $0 + 1 } }
            let end = tail
            tails.withLock { $0.append(end) }
        }
        let ends = tails.withLock { $0 }
        let values = try await when(fulfilled: ends).fulfilledValue()
        #expect(values == Array(repeating: 60, count: 64))
    }

    @Test("guarantees resolved and observed from many threads")
    func guaranteesRace() async {
        let count = 500
        let pairs = (0..<count).map { _ in Guarantee<Int>.pending() }
        let resolves = Unchecked(value: pairs.map(\.resolve))
        let guarantees = Unchecked(value: pairs.map(\.guarantee))
        let seen = Tallies(count)
        let tails = Locked<[Guarantee<Void>]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var mine: [Guarantee<Void>] = []
            for index in 0..<count {
                mine.append(guarantees.value[index].done(on: nil) { seen.record(index, value: $0) })
                if index % 8 == thread { resolves.value[index](index) }
            }
            tails.withLock { $0.append(contentsOf: mine) }
        }
        _ = await when(guarantees: tails.withLock { $0 }).outcome()
        #expect(seen.all == Array(repeating: 8, count: count))
        #expect(seen.distinctValues.enumerated().allSatisfy { $1 == [$0] })
    }

    @Test("reading a resolver's location while another thread fulfils it is race-free (checked by TSan)")
    func locationWhileSealing() {
        for _ in 0..<200 {
            let (_, resolver) = Promise<Int>.pending()
            let files = Recorder<String>()
            runTogether(
                {
                    for _ in 0..<10 { files.append(resolver.location.file) }
                },
                {
                    resolver.fulfill(1)
                })
            #expect(Set(files.all) == ["PromisesTests/ConcurrencyStressTests.swift"])
        }
    }
}
