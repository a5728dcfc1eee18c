import Foundation
import JobCalendar
import JobValues

/// One `schedule:` of a job definition: when its occurrences fall, and what
/// happens to one that was missed or that would overlap the previous.
///
/// Each occurrence becomes one job whose `scheduled_for` is the occurrence's
/// time; the database holds each (definition, scheduled_for) once, so any
/// number of jobds on one database fire an occurrence exactly once.
public struct ScheduleDefinition: Sendable, Hashable {
    /// What to do with occurrences that fell while no jobd was running.
    public enum CatchUp: String, Sendable, Hashable, CaseIterable {
        /// Skip them; fire again from the next occurrence.
        case none
        /// Fire the most recent one, skip the others (the default).
        case latest
        /// Fire each of them, oldest first, at most ``ScheduleDefinition/maxCatchUp``.
        case all
    }

    /// What to do with an occurrence while the previous one's job has not ended.
    public enum Overlap: String, Sendable, Hashable, CaseIterable {
        /// Skip it, with an event that says so (the default).
        case skip
        /// Hold it until the previous job ends, then fire it.
        case queue
        /// Fire it anyway: occurrences may run at once.
        case allow
    }

    /// The most occurrences `catch-up: all` fires after downtime.
    public static let maxCatchUp = 100

    /// The most schedules one definition may have (copies of one schedule
    /// count once).
    public static let maxPerDefinition = 100

    public var expression: ScheduleExpression
    /// The zone cron and calendar expressions are read in; nil: the host's
    /// (a calendar expression that names its own zone uses that).
    public var timeZone: TimeZone?
    public var catchUp: CatchUp
    public var overlap: Overlap
    /// Each occurrence's job runs up to this much later than the occurrence,
    /// by an amount every host computes the same (a hash of the definition
    /// and the occurrence); nil: at the occurrence.
    public var jitter: Duration?
    /// Each occurrence's job input.
    public var input: Data
    /// Where the schedule sits in its file.
    public var sourcePosition: SourcePosition

    public init(
        expression: ScheduleExpression, timeZone: TimeZone? = nil, catchUp: CatchUp = .latest, overlap: Overlap = .skip,
        jitter: Duration? = nil, input: Data = Data(), sourcePosition: SourcePosition
    ) {
        self.expression = expression
        self.timeZone = timeZone
        self.catchUp = catchUp
        self.overlap = overlap
        self.jitter = jitter
        self.input = input
        self.sourcePosition = sourcePosition
    }

    /// What names the schedule in the database (how far it has fired):
    /// its expression and zone. An edited expression is a new schedule.
    public var key: String {
        "\(expression)" + (timeZone.map { " @\($0.identifier)" } ?? "")
    }

    /// Whether the host's zone decides when it fires: no `timezone:`, and
    /// an expression that names no zone of its own.
    public var readsHostZone: Bool {
        timeZone == nil && expression.readsDefaultZone
    }

    /// The zone occurrences are computed in, given the host's.
    public func zone(host: TimeZone) -> TimeZone {
        expression.timeZone(default: timeZone ?? host)
    }

    /// How far after `occurrence` its job runs: in [0, jitter), the same on
    /// every host (FNV-1a of the definition's name and the occurrence's
    /// millisecond).
    public func jitterOffset(definition: String, occurrence: Date) -> Duration {
        guard let jitter, let span = jitter.wholeMilliseconds, span > 0 else { return .zero }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let millis = Int64((occurrence.timeIntervalSince1970 * 1000).rounded())
        for byte in Array(definition.utf8) + withUnsafeBytes(of: millis.littleEndian, Array.init) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return .milliseconds(Int64(hash % UInt64(span)))
    }
}
