import Promises
import Testing

@Suite("Sequence helpers")
struct SequenceTests {
    @Test("mapValues, flatMapValues, compactMapValues, filterValues, sortedValues")
    func transforms() async throws {
        let numbers = Promise.value([3, 1, 2])
        #expect(try await numbers.mapValues { $0 * 10 }.fulfilledValue() == [30, 10, 20])
        #expect(try await numbers.flatMapValues { [$0, $0] }.fulfilledValue() == [3, 3, 1, 1, 2, 2])
        #expect(try await Promise.value(["1", "x", "3"]).compactMapValues { Int($0) }.fulfilledValue() == [1, 3])
        #expect(try await numbers.filterValues { $0 > 1 }.fulfilledValue() == [3, 2])
        #expect(try await numbers.sortedValues().fulfilledValue() == [1, 2, 3])
    }

    @Test("a throwing transform rejects")
    func throwingTransforms() async throws {
        let numbers = Promise.value([1, 2])
        let mapped = numbers.mapValues { value -> Int in
            if value == 2 { throw TestError.numbered(2) }
            return value
        }
        #expect(try await mapped.rejection() as? TestError == .numbered(2))
        let flatMapped = numbers.flatMapValues { _ -> [Int] in throw TestError.first }
        #expect(try await flatMapped.rejection() as? TestError == .first)
        let compactMapped = numbers.compactMapValues { _ -> Int? in throw TestError.second }
        #expect(try await compactMapped.rejection() as? TestError == .second)
    }

    @Test("thenMap waits for every thenable and keeps the order, whatever order they resolve in")
    func thenMap() async throws {
        let (slow, slowResolver) = Promise<Int>.pending()
        let result = Promise.value([0, 1, 2]).thenMap(on: nil) { index -> Promise<Int> in
            index == 0 ? slow : .value(index * 100)
        }
        #expect(result.isPending)
        slowResolver.fulfill(-1)
        #expect(try await result.fulfilledValue() == [-1, 100, 200])
        let failed = Promise.value([0, 1]).thenMap { index -> Promise<Int> in
            index == 1 ? Promise(error: TestError.numbered(index)) : .value(index)
        }
        #expect(try await failed.rejection() as? TestError == .numbered(1))
        let guaranteed = Promise.value([1, 2]).thenMap { Guarantee.value($0 + 1) }
        #expect(try await guaranteed.fulfilledValue() == [2, 3])
    }

    @Test("thenFlatMap flattens the sequences, in order")
    func thenFlatMap() async throws {
        let result = Promise.value([1, 2, 3]).thenFlatMap { Promise.value(Array(repeating: $0, count: $0)) }
        #expect(try await result.fulfilledValue() == [1, 2, 2, 3, 3, 3])
        let failed = Promise.value([1]).thenFlatMap { _ in Promise<[Int]>(error: TestError.second) }
        #expect(try await failed.rejection() as? TestError == .second)
    }

    @Test("firstValue and lastValue, and emptySequence for an empty collection")
    func firstAndLast() async throws {
        #expect(try await Promise.value([4, 5, 6]).firstValue.fulfilledValue() == 4)
        #expect(try await Promise.value([4, 5, 6]).lastValue.fulfilledValue() == 6)
        for error in [
            try await Promise.value([Int]()).firstValue.rejection(),
            try await Promise.value([Int]()).lastValue.rejection(),
        ] {
            guard case PMKError.emptySequence = error else {
                Issue.record("expected emptySequence, got \(error)")
                continue
            }
        }
    }

    @Test("firstValue(where:): the first match; emptySequence when none matches or the sequence is empty")
    func firstValueWhere() async throws {
        #expect(try await Promise.value([1, 8, 9]).firstValue { $0 > 5 }.fulfilledValue() == 8)
        for source in [[1, 2, 3], []] {
            let error = try await Promise.value(source).firstValue { $0 > 5 }.rejection()
            guard case PMKError.emptySequence = error else {
                Issue.record("expected emptySequence for \(source), got \(error)")
                continue
            }
        }
    }

    @Test("helpers pass a rejection through untouched")
    func rejectionPassesThrough() async throws {
        let rejected = Promise<[Int]>(error: TestError.first)
        #expect(try await rejected.mapValues { $0 }.rejection() as? TestError == .first)
        #expect(try await rejected.filterValues { _ in true }.rejection() as? TestError == .first)
        #expect(try await rejected.firstValue.rejection() as? TestError == .first)
        #expect(try await rejected.thenMap { Promise.value($0) }.rejection() as? TestError == .first)
        #expect(try await rejected.sortedValues().rejection() as? TestError == .first)
    }

    @Test("the helpers work on a Guarantee of a sequence")
    func onGuarantee() async throws {
        let values = Guarantee.value([2, 1])
        #expect(try await values.mapValues { $0 + 1 }.fulfilledValue() == [3, 2])
        #expect(try await values.sortedValues().fulfilledValue() == [1, 2])
        #expect(try await values.thenMap { Guarantee.value($0 * 2) }.fulfilledValue() == [4, 2])
    }
}
