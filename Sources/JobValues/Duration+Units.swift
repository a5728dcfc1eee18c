import Dispatch
import Foundation

/// A `Duration` in the units the rest of jobd hands to other APIs: seconds
/// for `Date`, milliseconds for SQL and `poll`, nanoseconds for monotonic
/// clocks, `DispatchTimeInterval` for `DispatchTime`.
///
/// Every whole-unit conversion follows one rule: a negative duration (a
/// wall clock stepped back between two readings) counts as zero, and one too
/// long for an `Int64` of the unit is `Int64.max`. Durations jobd reads are
/// at most ``Duration/jobdMaximum``, far inside either bound.
extension Duration {
    /// The duration in seconds, sign kept, for `Date` and `TimeInterval` arithmetic.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole milliseconds, the remainder dropped.
    public var milliseconds: Int64 { wholeUnits(per: 1_000, rounding: .down) }

    /// Whole milliseconds, a partial one counted as one (a `poll` timeout
    /// that wakes after the duration, never before).
    public var roundedUpMilliseconds: Int64 { wholeUnits(per: 1_000, rounding: .up) }

    /// Whole nanoseconds, the remainder dropped.
    public var nanoseconds: Int64 { wholeUnits(per: 1_000_000_000, rounding: .down) }

    /// For `DispatchTime` arithmetic, in nanoseconds: `.never` for a duration
    /// too long for nanoseconds in an `Int`.
    public var dispatchInterval: DispatchTimeInterval {
        let nanoseconds = nanoseconds
        guard nanoseconds < Int64(Int.max) else { return .never }
        return .nanoseconds(Int(nanoseconds))
    }

    private enum Rounding {
        case down, up
    }

    /// The duration in units of which there are `perSecond` in a second,
    /// under the rule of the extension's notes.
    private func wholeUnits(per perSecond: Int64, rounding: Rounding) -> Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let attosecondsPerUnit = 1_000_000_000_000_000_000 / perSecond
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return .max }
        var part = attoseconds / attosecondsPerUnit
        if rounding == .up, attoseconds % attosecondsPerUnit != 0 { part += 1 }
        let (total, overflowAdding) = whole.addingReportingOverflow(part)
        return overflowAdding ? .max : total
    }
}
