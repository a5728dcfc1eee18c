import Dispatch
import Foundation
import PromiseKit
import XCTest

// What the library adds to PromiseKit, used from client code in both
// language modes. The only file here that PromiseKit 8.2.0 itself cannot
// compile.

extension ConfigurationTests {
    // An addition to PromiseKit: calls record where the promise was made,
    // in either language mode; PromiseKit's signatures, taken as function
    // values, cannot know.
    func testLeakReportsSayWhere() {
        let log = Log()
        conf.leakHandler = { leak in
            log.append("\(leak.event) \(leak.location.file):\(leak.location.line) \(leak.canReject)")
        }
        let file = "\(#fileID)"
        let line = #line
        _ = Promise<Int>.pending()
        _ = Promise<Int> { _ in }
        _ = Guarantee<Int>.pending()
        _ = Guarantee<Int> { _ in }
        let makePromise = Promise<Int>.pending
        _ = makePromise()
        let makeGuarantee = Guarantee<Int>.init(resolver:)
        _ = makeGuarantee { _ in }
        XCTAssertEqual(
            log.all,
            [
                "\(LogEvent.pendingPromiseDeallocated) \(file):\(line + 1) true",
                "\(LogEvent.pendingPromiseDeallocated) \(file):\(line + 2) true",
                "\(LogEvent.pendingGuaranteeDeallocated) \(file):\(line + 3) false",
                "\(LogEvent.pendingGuaranteeDeallocated) \(file):\(line + 4) false",
                "\(LogEvent.pendingPromiseDeallocated) <unknown>:0 true",
                "\(LogEvent.pendingGuaranteeDeallocated) <unknown>:0 false",
            ])
    }
}
