import Dispatch
import Foundation
import PromiseKit
import Testing

// `SourceLocation` unqualified is Testing's: PromiseKit's module adds no
// type of that name (#19).
func here(_ location: SourceLocation = #_sourceLocation) -> SourceLocation {
    return location
}

/// What a generic client function that needs `Sendable` accepts.
func shared<Value: Sendable>(_ value: Value) -> Value {
    return value
}

/// The description a client gives each PromiseKit error, naming every case
/// as an exhaustive `switch` must — the deprecated `.flatMap` too (#7).
@available(*, deprecated, message: "names PMKError.flatMap, deprecated as in PromiseKit")
func describe(_ error: PMKError) -> String {
    switch error {
    case .invalidCallingConvention: return "calling convention"
    case .returnedSelf: return "returned self"
    case .badInput: return "bad input"
    case .cancelled: return "cancelled"
    case .compactMap: return "compactMap"
    case .flatMap: return "flatMap"
    case .emptySequence: return "empty"
    case .noWinner: return "no winner"
    }
}

@Suite("The module, its names and its types' conformances")
struct ModuleTests {
    @Test("PMKError: an exhaustive switch, .flatMap included, and PromiseKit's descriptions (#7)")
    @available(*, deprecated, message: "names PMKError.flatMap, deprecated as in PromiseKit")
    func pmkErrorSwitch() {
        #expect(describe(.noWinner) == "no winner")
        #expect(describe(.flatMap(1, String.self)) == "flatMap")
        #expect(PMKError.flatMap(1, String.self).debugDescription == "Could not `flatMap<String>`: 1")
        #expect(PMKError.compactMap("x", Int.self).debugDescription == "Could not `compactMap<Int>`: x")
        #expect(PMKError.badInput.localizedDescription == "Bad input was provided to a PromiseKit function")
        #expect(PMKError.cancelled.isCancelled)
        #expect((PMKError.cancelled as Error).isCancelled)
        #expect(!(FetchError.offline as Error).isCancelled)
    }

    @Test("module-qualified names: PromiseKit.Result, PromiseKit.after, PromiseKit.conf, … (#20)")
    func moduleQualifiedNames() throws {
        let result: PromiseKit.Result<Int> = .fulfilled(1)
        #expect(result.isFulfilled)
        let unqualified: Result<Int> = .rejected(FetchError.offline)
        #expect(!unqualified.isFulfilled)
        PromiseKit.after(seconds: 0.01).wait()
        #expect(PromiseKit.conf.Q.map !== DispatchQueue.main)
        let chained: PromiseKit.Promise<Int> = PromiseKit.firstly {
            PromiseKit.Promise.value(1)
        }.then { value in
            PromiseKit.when(fulfilled: PromiseKit.Promise.value(value), PromiseKit.Guarantee.value(2))
        }.map { $0 + $1 }
        #expect(try chained.wait() == 3)
        #expect(throws: PromiseKit.PMKError.self) { try PromiseKit.race([PromiseKit.Promise<Int>]()).wait() }
    }

    @Test("SourceLocation beside import PromiseKit is Testing's (#19)")
    func sourceLocationIsTestings() {
        let location = here()
        #expect(location.fileID.hasSuffix("ModuleTests.swift"))
        #expect(location.line > 0)
    }

    @Test("Promise, Guarantee and Resolver of a non-Sendable value are Sendable (#18)")
    func sendableWhateverTheValue() async throws {
        let promise = shared(Promise<ViewModel> { seal in seal.fulfill(ViewModel()) })
        let guarantee = shared(Guarantee<ViewModel>.value(ViewModel()))
        let (pending, resolver) = Promise<ViewModel>.pending()
        let sharedResolver = shared(resolver)
        let fulfilled = await Task.detached {
            sharedResolver.fulfill(ViewModel())
            return promise.isFulfilled && guarantee.isFulfilled
        }.value
        #expect(fulfilled)
        #expect(try pending.wait().title == "")
        #expect(promise.value?.items == [])
    }
}
