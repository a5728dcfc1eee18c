import Promises
import Testing

/// What a leak handler saw.
struct SeenLeak: Sendable, Equatable {
    let event: String
    let location: PMKSourceLocation
    let canReject: Bool
}

/// Runs `body` with a leak handler that records every report, then restores the old handler.
func recordingLeaks(_ body: () async throws -> Void) async rethrows -> [SeenLeak] {
    let seen = Recorder<SeenLeak>()
    let saved = conf.leakHandler
    conf.leakHandler = { report in
        seen.append(SeenLeak(event: "\(report.event)", location: report.location, canReject: report.canReject))
    }
    defer { conf.leakHandler = saved }
    try await body()
    return seen.all
}

/// The location of the line after the caller's.
func nextLine(file: String = #fileID, line: UInt = #line) -> PMKSourceLocation {
    PMKSourceLocation(file: file, line: line + 1)
}

let promiseLeak = "\(LogEvent.pendingPromiseDeallocated)"
let guaranteeLeak = "\(LogEvent.pendingGuaranteeDeallocated)"

extension GlobalConfiguration {
    @Suite("Leaks: pending promises and guarantees that can never resolve")
    struct LeakTests {
        @Test("Promise.pending() whose resolver is dropped reports .pendingPromiseDeallocated where it was made")
        func pendingPromise() async {
            var site = PMKSourceLocation.unknown
            let leaks = await recordingLeaks {
                site = nextLine()
                _ = Promise<Int>.pending()
            }
            #expect(leaks == [SeenLeak(event: promiseLeak, location: site, canReject: true)])
            #expect(site.file == "PromisesTests/LeakTests.swift")
        }

        @Test("Promise { seal in } that drops seal reports where it was made")
        func promiseInit() async {
            var site = PMKSourceLocation.unknown
            let leaks = await recordingLeaks {
                site = nextLine()
                _ = Promise<String> { _ in }
            }
            #expect(leaks == [SeenLeak(event: promiseLeak, location: site, canReject: true)])
        }

        @Test("Guarantee.pending() dropped pending reports .pendingGuaranteeDeallocated where it was made")
        func pendingGuarantee() async {
            var site = PMKSourceLocation.unknown
            let leaks = await recordingLeaks {
                site = nextLine()
                _ = Guarantee<Int>.pending()
            }
            #expect(leaks == [SeenLeak(event: guaranteeLeak, location: site, canReject: false)])
            #expect(site.file == "PromisesTests/LeakTests.swift")
        }

        @Test("Guarantee { resolve in } that never resolves reports where it was made")
        func guaranteeInit() async {
            var site = PMKSourceLocation.unknown
            let leaks = await recordingLeaks {
                site = nextLine()
                _ = Guarantee<Void> { _ in }
            }
            #expect(leaks == [SeenLeak(event: guaranteeLeak, location: site, canReject: false)])
        }

        @Test(
            "call sites that share a slot of a thread's location cache each report their own place, on fresh threads too"
        )
        func sitesSharingACacheSlot() async {
            // Each thread remembers 16 recent call sites, by file address
            // and line; lines 16 apart in one file land in one slot, so each
            // of these evicts the one before it.
            let lines: [UInt] = (0..<6).map { 3000 + 16 * $0 }
            let order = lines + lines.reversed() + lines
            @Sendable func makeAll() {
                for line in order {
                    _ = Promise<Int>.pending(file: "PromisesTests/Sites.swift", line: line)
                    _ = Guarantee<Int>.pending(file: "PromisesTests/Other.swift", line: line)
                }
            }
            let expected = order.flatMap { line in
                [
                    SeenLeak(
                        event: promiseLeak, location: .init(file: "PromisesTests/Sites.swift", line: line),
                        canReject: true),
                    SeenLeak(
                        event: guaranteeLeak, location: .init(file: "PromisesTests/Other.swift", line: line),
                        canReject: false),
                ]
            }
            let here = await recordingLeaks { makeAll() }
            #expect(here == expected)
            // Two threads that have made no promise yet: the first lookup
            // also makes the thread's state.
            let fresh = await recordingLeaks { runTogether(makeAll, makeAll) }
            let key = { (leak: SeenLeak) in "\(leak.location) \(leak.event)" }
            #expect(fresh.map(key).sorted() == (expected + expected).map(key).sorted())
        }

        @Test("the leak is reported when the last reference goes, not before")
        func reportedWhenLastReferenceGoes() async {
            var during: [SeenLeak] = []
            let leaks = await recordingLeaks {
                var kept: Resolver<Int>?
                do {
                    let (_, resolver) = Promise<Int>.pending()
                    kept = resolver
                }
                during = await recordingLeaks {}
                #expect(kept?.location.file == "PromisesTests/LeakTests.swift")
                kept = nil
            }
            #expect(during.isEmpty)
            #expect(leaks.count == 1)
        }

        @Test("nothing is reported for promises and guarantees that resolved, or were born resolved")
        func noReportWhenResolved() async {
            let leaks = await recordingLeaks {
                do {
                    let (_, resolver) = Promise<Int>.pending()
                    resolver.fulfill(1)
                }
                do {
                    let (_, resolver) = Promise<Int>.pending()
                    resolver.reject(TestError.first)
                }
                _ = Promise<Int> { $0.fulfill(1) }
                _ = Promise<Int> { _ in throw TestError.first }
                do {
                    let (_, resolve) = Guarantee<Int>.pending()
                    resolve(1)
                }
                _ = Guarantee<Int> { $0(2) }
                _ = Promise.value(1).map(on: nil) { $0 }
                _ = Guarantee.value(1).map(on: nil) { $0 }
                do {
                    // A chain hanging off a promise that is still referenced is not a leak.
                    let (promise, resolver) = Promise<Int>.pending()
                    _ = promise.map(on: nil) { $0 }
                    resolver.fulfill(3)
                }
            }
            #expect(leaks.isEmpty)
        }

        @Test("PMKLeakReport.reject settles the orphan: a chain waiting on it ends with PendingPromiseDeallocated")
        func rejectOrphan() async throws {
            let saved = conf.leakHandler
            conf.leakHandler = { report in
                report.reject(PendingPromiseDeallocated(location: report.location))
            }
            defer { conf.leakHandler = saved }
            var site = PMKSourceLocation.unknown
            let chain: Promise<Int>
            do {
                site = nextLine()
                let (orphan, _) = Promise<Int>.pending()
                chain = orphan.map { $0 + 1 }.then { Promise.value($0) }
            }
            let error = try await chain.rejection()
            let leak = try #require(error as? PendingPromiseDeallocated)
            #expect(leak.location == site)
            #expect("\(leak)".contains("PromisesTests/LeakTests.swift:\(site.line)"))
        }

        @Test("PMKLeakReport.reject on a guarantee's report does nothing")
        func rejectGuaranteeReport() async {
            let reports = Recorder<Bool>()
            let saved = conf.leakHandler
            conf.leakHandler = { report in
                report.reject(TestError.first)
                reports.append(report.canReject)
            }
            defer { conf.leakHandler = saved }
            _ = Guarantee<Int>.pending()
            #expect(reports.all == [false])
        }

        @Test("with no leak handler, a custom logHandler gets the plain events")
        func logHandlerGetsPlainEvents() async {
            #expect(conf.leakHandler == nil)
            let events = Recorder<String>()
            await withLogHandler({ event in
                switch event {
                case .pendingPromiseDeallocated, .pendingGuaranteeDeallocated:
                    events.append("\(event)")
                case .waitOnMainThread, .cauterized:
                    break
                }
            }) {
                _ = Promise<Int>.pending()
                _ = Promise<Int> { _ in }
                _ = Guarantee<Int>.pending()
                _ = Guarantee<Int> { _ in }
            }
            #expect(events.all == [promiseLeak, promiseLeak, guaranteeLeak, guaranteeLeak])
        }

        @Test("a leak handler, when set, gets the report instead of the logHandler")
        func leakHandlerTakesPrecedence() async {
            let logged = Counter()
            var leaks: [SeenLeak] = []
            await withLogHandler({ event in
                if case .pendingPromiseDeallocated = event { logged.increment() }
            }) {
                leaks = await recordingLeaks {
                    _ = Promise<Int>.pending()
                }
            }
            #expect(leaks.count == 1)
            #expect(logged.value == 0)
        }

        @Test("with neither handler set, stderr gets a line that says where the promise was made")
        func defaultWritesLocation() async throws {
            // Inside an exit test's body, `#line` default arguments resolve to the
            // line of the `#expect` that holds it.
            let line = #line + 1
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                _ = Promise<Int>.pending()
            }
            let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("pending promise deallocated"))
            #expect(stderr.contains("PromisesTests/LeakTests.swift:\(line)"))
        }

        @Test("putting the default logHandler back keeps the located stderr line")
        func resettingLogHandlerKeepsLocation() async throws {
            let line = #line + 1
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                conf.logHandler = conf.logHandler
                _ = Promise<Int>.pending()
            }
            let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("pending promise deallocated"))
            #expect(stderr.contains("PromisesTests/LeakTests.swift:\(line)"))
        }
    }
}
