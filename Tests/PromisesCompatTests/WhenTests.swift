import Dispatch
import Foundation
import PromiseKit
import Testing

/// Promises resolved from outside, one at a time, to drive the concurrent `when`s.
final class Batch: @unchecked Sendable {
    // @unchecked Sendable: the arrays are only touched under `lock`.
    private let lock = NSLock()
    private var resolvers: [Resolver<Int>] = []
    private(set) var started = 0
    private var running = 0
    private(set) var mostRunning = 0

    /// An iterator of `count` promises, each made when it is pulled.
    func promises(_ count: Int) -> AnyIterator<Promise<Int>> {
        var remaining = count
        return AnyIterator {
            guard remaining > 0 else { return nil }
            remaining -= 1
            return self.make()
        }
    }

    /// The next promise of the iterator; resolved by `finishNext`.
    func make() -> Promise<Int> {
        let (promise, resolver) = Promise<Int>.pending()
        lock.lock()
        resolvers.append(resolver)
        started += 1
        running += 1
        mostRunning = max(mostRunning, running)
        lock.unlock()
        return promise
    }

    /// Resolves the oldest unresolved promise: with its number, or the
    /// error for number `failing`.
    func finishNext(failing: Int? = nil) -> Bool {
        lock.lock()
        guard !resolvers.isEmpty else {
            lock.unlock()
            return false
        }
        let resolver = resolvers.removeFirst()
        let number = started - resolvers.count
        running -= 1
        lock.unlock()
        if number == failing {
            resolver.reject(FetchError.offline)
        } else {
            resolver.fulfill(number)
        }
        return true
    }
}

@Suite("when, as PromiseKit 8.2.0 has it")
struct WhenTests {
    @Test("when(fulfilled:) of a mixed array of a Guarantee and a Promise gives Promise<[Any]> (#1)")
    func mixedArray() throws {
        let all = when(fulfilled: [Guarantee.value(1), Promise.value("two")])
        let values = try all.wait()
        #expect(values.count == 2)
        #expect(values[0] as? Int == 1)
        #expect(values[1] as? String == "two")

        let failing = when(fulfilled: [Guarantee.value(1), Promise<String>(error: FetchError.offline)])
        #expect(throws: FetchError.offline) { try failing.wait() }

    }

    @Test("a same-type array literal where Promise<[Any]> is wanted (#1)")
    func sameTypeLiteralAsAny() throws {
        let all: Promise<[Any]> = when(fulfilled: [Promise.value(1), Promise.value(2)])
        #expect(try all.wait().compactMap { $0 as? Int } == [1, 2])
    }

    @Test("unlabelled when of guarantees: Guarantee<[T]>, and Guarantee<Void> for Void ones (#2)")
    func unlabelledGuarantees() {
        let numbers: Guarantee<[Int]> = when(Guarantee.value(1), Guarantee.value(2), Service().title().map { $0.count })
        #expect(numbers.wait() == [1, 2, 5])
        let log = Log()
        let both: Guarantee<Void> = when(Guarantee<Void>(), after(seconds: 0.01).done { log.append("after") })
        both.wait()
        #expect(log.all == ["after"])
    }

    @Test("when(guarantees:) of four and of five guarantees gives a tuple (#3)")
    func fourAndFiveGuarantees() {
        let (a, b, c, d) = when(
            guarantees: Guarantee.value(1), Guarantee.value("b"), Guarantee.value(true), Service().title()
        ).wait()
        #expect(a == 1 && b == "b" && c && d == "Title")
        let five = when(
            guarantees: Guarantee.value(1), Guarantee.value(2), Guarantee.value(3), Guarantee.value(4),
            Guarantee.value("5"))
        let (p, q, r, s, t) = five.wait()
        #expect([p, q, r, s] == [1, 2, 3, 4] && t == "5")
    }

    @Test("when(resolved: iterator, concurrently:) keeps the limit and every result in iterator order (#4)")
    func resolvedConcurrently() {
        let batch = Batch()
        let generator = batch.promises(5)
        let all: Guarantee<[Result<Int>]> = when(resolved: generator, concurrently: 2)
        #expect(batch.started == 2)
        while batch.finishNext(failing: 2) {}
        let results = all.wait()
        #expect(batch.mostRunning == 2)
        #expect(results.count == 5)
        let described = results.map { result -> String in
            switch result {
            case .fulfilled(let value): return "\(value)"
            case .rejected(let error): return "\(error)"
            }
        }
        #expect(described == ["1", "offline", "3", "4", "5"])
    }

    @Test("when(resolved:concurrently:) with a limit below 1 gives the one result PMKError.badInput (#4)")
    func resolvedConcurrentlyBadInput() {
        let results = when(resolved: [Promise.value(1)].makeIterator(), concurrently: 0).wait()
        #expect(results.count == 1)
        guard case .rejected(PMKError.badInput)? = results.first else {
            Issue.record("expected .rejected(PMKError.badInput), got \(results)")
            return
        }
    }

    @Test("when(fulfilled: iterator, concurrently:) stops pulling at the first rejection")
    func fulfilledConcurrently() {
        let batch = Batch()
        let generator = batch.promises(5)
        let all = when(fulfilled: generator, concurrently: 2)
        while batch.finishNext(failing: 2) {}
        #expect(throws: FetchError.offline) { try all.wait() }
        #expect(batch.started == 3)
        #expect(throws: PMKError.self) {
            try when(fulfilled: [Promise.value(1)].makeIterator(), concurrently: 0).wait()
        }
    }

    @Test("when(fulfilled:) of guarantees is a Promise: catch follows, Promise<[T]> takes it (#16)")
    func fulfilledGuaranteesArePromises() throws {
        let guarantees = [Guarantee.value(1), Guarantee.value(2)]
        let all: Promise<[Int]> = when(fulfilled: guarantees)
        #expect(try all.wait() == [1, 2])
        let log = Log()
        let (finished, finish) = Guarantee<Void>.pending()
        when(fulfilled: guarantees).done { values in
            log.append("\(values)")
        }.catch { error in
            log.append("catch \(error)")
        }.finally {
            finish(())
        }
        finished.wait()
        #expect(log.all == ["[1, 2]"])
    }

    @Test("when(guarantees:) of Void guarantees gives a tuple of Voids (#17)")
    func voidGuaranteesTuple() {
        let log = Log()
        let both = when(guarantees: Guarantee<Void>(), after(seconds: 0.01)).done { a, b in
            log.append("\(a) \(b)")
        }
        both.wait()
        #expect(log.all == ["() ()"])
        let all: Guarantee<Void> = when(guarantees: [Guarantee<Void>(), Guarantee<Void>()])
        all.wait()
    }

    @Test("when(resolved:) of promises never fails")
    func resolved() {
        let results = when(resolved: Promise.value(1), Promise<Int>(error: FetchError.offline)).wait()
        #expect(results.map { $0.isFulfilled } == [true, false])
    }
}
