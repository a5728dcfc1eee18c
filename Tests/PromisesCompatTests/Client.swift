import Dispatch
import Foundation
import PromiseKit

// Code written the way PromiseKit 8 clients write it — `import PromiseKit`,
// nothing else changed — compiled twice: in Swift 5 language mode
// (PromisesCompatTests) and in Swift 6 mode (PromisesCompatSwift6Tests, a
// link to this folder). Code the two modes need written differently, apart
// from the library, is written for Swift 6, which Swift 5 also accepts.
// Apart from AdditionTests.swift (what this library adds), each file also
// typechecks against PromiseKit 8.2.0 itself, in Swift 5 mode.
//
// Tests that change `conf` are XCTest cases (ConfigurationTests.swift):
// XCTest runs its cases one at a time, before any Swift Testing test, so
// they never overlap the Swift Testing tests of this and other modules that
// read `conf`. The Swift Testing tests here leave `conf` alone, never leak
// a pending promise and never cauterize an error, so that the serialized
// suites of PromisesTests that count such events see only their own.

enum FetchError: Error {
    case notFound
    case offline
}

/// A plain non-Sendable class, captured by handlers as PromiseKit allows.
final class ViewModel {
    var title = ""
    var items: [Int] = []
    var events: [String] = []
}

/// Lines written by handlers on any thread, read by the test afterwards.
final class Log: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

/// A completion-handler API wrapped the PromiseKit way.
final class Service: Sendable {
    let queue = DispatchQueue(label: "service")

    func load(_ id: Int, completion: @escaping @Sendable (Int?, Error?) -> Void) {
        queue.async {
            if id < 0 {
                completion(nil, FetchError.notFound)
            } else {
                completion(id * 2, nil)
            }
        }
    }

    func load(_ id: Int) -> Promise<Int> {
        return Promise { seal in
            load(id) { value, error in
                seal.resolve(value, error)
            }
        }
    }

    func ping() -> Promise<Void> {
        return Promise { seal in
            queue.async {
                seal.fulfill(())
            }
        }
    }

    func title() -> Guarantee<String> {
        return Guarantee { seal in
            queue.async {
                seal("Title")
            }
        }
    }
}
