import Dispatch
import Foundation

/// A guarantee resolved after `seconds` (measured on a monotonic clock).
public func after(seconds: TimeInterval) -> Guarantee<Void> {
    after(.nanoseconds(Int((seconds * 1_000_000_000).rounded())))
}

/// A guarantee resolved after `interval` (measured on a monotonic clock).
public func after(_ interval: DispatchTimeInterval) -> Guarantee<Void> {
    let (rg, rgbox) = Guarantee<Void>.makePending()
    let box = UncheckedSendable(rgbox)
    DispatchQueue.global().asyncAfter(deadline: .now() + interval) {
        box.value.settle(())
    }
    return rg
}
