import Dispatch
import Foundation

/// A guarantee resolved after `seconds`, measured on a monotonic clock.
/// Zero or less resolves at once (on a global queue); an interval too large
/// to represent, infinity included, never resolves; NaN counts as zero.
public func after(seconds: TimeInterval) -> Guarantee<Void> {
    let nanoseconds = seconds * 1_000_000_000
    guard nanoseconds < Double(Int.max) else {
        return after(.never)
    }
    return after(.nanoseconds(nanoseconds > 0 ? Int(nanoseconds.rounded()) : 0))
}

/// A guarantee resolved after `interval`, measured on a monotonic clock.
/// `.never` never resolves.
public func after(_ interval: DispatchTimeInterval) -> Guarantee<Void> {
    let (guarantee, box) = Guarantee<Void>.makePending()
    if case .never = interval {
        return guarantee
    }
    let transfer = UncheckedSendable(box)
    DispatchQueue.global().asyncAfter(deadline: .now() + interval) {
        transfer.value.settle(())
    }
    return guarantee
}
