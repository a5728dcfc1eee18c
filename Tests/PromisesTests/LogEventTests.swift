import Dispatch
import Foundation
import Promises
import Testing

// `.waitOnMainThread` needs a test on the main thread; Swift Testing never
// runs one there on Linux (not even on the main actor), so the positive case
// lives in PromisesCompatTests (XCTest runs test methods on the main thread).
// `.cauterized` is covered in CatchTests, the leak events in LeakTests.

extension GlobalConfiguration {
    @Suite("Log events")
    struct LogEventTests {
        @Test("an event interpolates as its case, as in PromiseKit; .message is a sentence")
        func interpolationAndMessage() {
            #expect("\(LogEvent.waitOnMainThread)" == "waitOnMainThread")
            #expect("\(LogEvent.pendingPromiseDeallocated)" == "pendingPromiseDeallocated")
            #expect("\(LogEvent.pendingGuaranteeDeallocated)" == "pendingGuaranteeDeallocated")
            #expect("\(LogEvent.cauterized(TestError.numbered(77)))".hasPrefix("cauterized("))
            let events: [LogEvent] = [
                .waitOnMainThread, .pendingPromiseDeallocated, .pendingGuaranteeDeallocated,
                .cauterized(TestError.numbered(77)),
            ]
            let messages = events.map(\.message)
            #expect(messages[1] == "warning: pending promise deallocated")
            #expect(Set(messages).count == 4)
            #expect(messages[3].contains("numbered(77)"))
        }

        @Test("conf.logHandler can be called directly and reaches the installed handler")
        func callDirectly() async {
            let events = Recorder<String>()
            await withLogHandler({ events.append("\($0)") }) {
                conf.logHandler(.pendingPromiseDeallocated)
                conf.logHandler(.waitOnMainThread)
            }
            #expect(events.all == ["\(LogEvent.pendingPromiseDeallocated)", "\(LogEvent.waitOnMainThread)"])
        }

        @Test("wait() off the main thread logs nothing, pending or resolved")
        func waitOffMainThread() async throws {
            let events = Recorder<String>()
            try await withLogHandler({ event in
                if case .waitOnMainThread = event { events.append("\(event)") }
            }) { () async throws in
                #expect(!Thread.isMainThread)
                #expect(try Promise.value(1).wait() == 1)
                let (pending, resolver) = Promise<Int>.pending()
                DispatchQueue.global().async { resolver.fulfill(2) }
                #expect(try pending.wait() == 2)
                let (guarantee, resolve) = Guarantee<Int>.pending()
                let resolveLater = Unchecked(value: resolve)
                DispatchQueue.global().async { resolveLater.value(3) }
                #expect(guarantee.wait() == 3)
            }
            #expect(events.all.isEmpty)
        }

        @Test("the default logHandler writes the event to stderr")
        func defaultWritesToStderr() async throws {
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                Promise<Int>(error: TestError.numbered(5)).cauterize()
                _ = try? Promise.value(0).map { $0 }.wait()
            }
            let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("cauterized"))
            #expect(stderr.contains("numbered(5)"))
        }
    }
}
