import Promises
import Testing

@Suite("race")
struct RaceTests {
    @Test("race: the first to resolve wins, whatever its position")
    func firstWins() async throws {
        let pairs = (0..<3).map { _ in Promise<Int>.pending() }
        let winner = race(pairs[0].promise, pairs[1].promise, pairs[2].promise)
        #expect(winner.isPending)
        pairs[2].resolver.fulfill(2)
        pairs[0].resolver.fulfill(0)
        pairs[1].resolver.reject(TestError.first)
        #expect(try await winner.fulfilledValue() == 2)
    }

    @Test("race: a rejection that comes first wins")
    func firstRejectionWins() async throws {
        let pairs = (0..<2).map { _ in Promise<Int>.pending() }
        let winner = race(pairs.map(\.promise))
        pairs[1].resolver.reject(TestError.second)
        pairs[0].resolver.fulfill(0)
        #expect(try await winner.rejection() as? TestError == .second)
    }

    @Test("race of an empty array rejects with badInput")
    func emptyRace() async throws {
        let error = try await race([Promise<Int>]()).rejection()
        guard case PMKError.badInput = error else {
            Issue.record("expected badInput, got \(error)")
            return
        }
    }

    @Test("race of guarantees: the first to resolve wins")
    func guarantees() async {
        let (a, resolveA) = Guarantee<String>.pending()
        let (b, resolveB) = Guarantee<String>.pending()
        let winner: Guarantee<String> = race(a, b)
        resolveB("b")
        resolveA("a")
        _ = await winner.outcome()
        #expect(winner.value == "b")
    }

    @Test("race(fulfilled:): the first fulfilment wins even after rejections")
    func firstFulfilmentWins() async throws {
        let pairs = (0..<3).map { _ in Promise<Int>.pending() }
        let winner = race(fulfilled: pairs.map(\.promise))
        pairs[0].resolver.reject(TestError.first)
        pairs[2].resolver.reject(TestError.second)
        #expect(winner.isPending, "race(fulfilled:) settled on a rejection")
        pairs[1].resolver.fulfill(1)
        #expect(try await winner.fulfilledValue() == 1)
    }

    @Test("race(fulfilled:): noWinner when every input rejects, badInput when there are none")
    func noWinner() async throws {
        let all = race(fulfilled: [Promise<Int>(error: TestError.first), Promise<Int>(error: TestError.second)])
        let error = try await all.rejection()
        guard case PMKError.noWinner = error else {
            Issue.record("expected noWinner, got \(error)")
            return
        }
        let empty = try await race(fulfilled: [Promise<Int>]()).rejection()
        guard case PMKError.badInput = empty else {
            Issue.record("expected badInput, got \(empty)")
            return
        }
    }
}
