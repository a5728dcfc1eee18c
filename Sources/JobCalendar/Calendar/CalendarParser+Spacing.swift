extension CalendarParser {
    /// Refuses seconds that may fire less than `minimum` microseconds apart.
    ///
    /// Every other field counts whole minutes or more, so only the seconds
    /// field can put two occurrences closer than a minute: within one minute
    /// (a repetition shorter than `minimum`, or two items close together)
    /// or across the turn of a minute (the last second of one minute and the
    /// first of the next, as when every minute fires). The times of each
    /// item are listed — at most 60 per item once no repetition is shorter
    /// than a second — and their gaps compared, the turn of the minute
    /// included whatever the minute field says (a conservative reading).
    func checkSpacing(_ seconds: [Located], minimum: Int) throws(ScheduleParseError) {
        let minute = 60 * Self.usecPerSecond
        let floor = Self.secondsText(minimum)
        var times: [(value: Int, offset: Int)] = []
        for located in seconds {
            let component = located.component
            guard component.repeat > 0 else {
                times.append((component.start, located.offset))
                continue
            }
            if component.repeat < minimum {
                throw fail(
                    .outOfRange, "second", at: located.offset,
                    "the repetition /\(Self.secondsText(component.repeat)) fires more often than once every "
                        + "\(floor)s; a schedule fires at most once a second (write /1 or longer)")
            }
            let last = component.stop >= 0 ? component.stop : minute - 1
            for value in stride(from: component.start, through: last, by: component.repeat) {
                times.append((value, located.offset))
            }
        }
        // Items are written in any order; the one written later is blamed.
        times.sort { ($0.value, $0.offset) < ($1.value, $1.offset) }
        var unique: [(value: Int, offset: Int)] = []
        for time in times where unique.last?.value != time.value { unique.append(time) }
        for (earlier, later) in zip(unique, unique.dropFirst()) where later.value - earlier.value < minimum {
            throw fail(
                .outOfRange, "second", at: max(earlier.offset, later.offset),
                "\(Self.secondsText(later.value)) is \(Self.secondsText(later.value - earlier.value))s after "
                    + "\(Self.secondsText(earlier.value)); a schedule's occurrences must be at least \(floor)s apart")
        }
        if let first = unique.first, let last = unique.last, unique.count > 1,
            first.value + minute - last.value < minimum
        {
            throw fail(
                .outOfRange, "second", at: max(first.offset, last.offset),
                "\(Self.secondsText(last.value)) is \(Self.secondsText(first.value + minute - last.value))s "
                    + "before \(Self.secondsText(first.value)) of the next minute; a schedule's occurrences must "
                    + "be at least \(floor)s apart")
        }
    }
}
