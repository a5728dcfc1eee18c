import Foundation
import JobStore
import Promises

/// The store's completion-handler calls as promises. A completion runs on
/// the store's writer thread right after its commit, and only resolves the
/// promise there: whatever follows is dispatched to a stage queue by the
/// next operator of the chain.
extension JobStore {
    func promise(start: StageStart) -> Promise<Void> {
        let (promise, resolver) = Promise<Void>.pending()
        recordStageStart(start) { resolver.resolve($0) }
        return promise
    }

    func promise(finish: JobFinish) -> Promise<Void> {
        let (promise, resolver) = Promise<Void>.pending()
        self.finish(finish) { resolver.resolve($0) }
        return promise
    }

    func promise(event: NewEvent) -> Promise<Void> {
        let (promise, resolver) = Promise<Void>.pending()
        recordEvent(event) { resolver.resolve($0) }
        return promise
    }
}
