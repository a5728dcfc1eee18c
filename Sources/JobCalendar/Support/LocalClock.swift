/// A C `struct tm` as systemd's calendar search handles it: fields may be
/// out of range (minute 60, day 0, month 12) until `mktime` normalises
/// them. `month` is 0-based like `tm_mon`; `year` is the full year.
struct BrokenDownTime: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int
    /// `tm_isdst`: -1 unknown, 0 standard time, 1 daylight saving time.
    var isDST: Int

    /// Seconds since 1970-01-01 00:00:00 on the broken-down clock, carrying
    /// out-of-range fields over.
    var localSeconds: Int64 {
        WallTime(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second).localSeconds
    }

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, isDST: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second, self.isDST) = (
            year, month, day, hour, minute, second, isDST
        )
    }

    init(localSeconds: Int64, isDST: Int) {
        let wall = WallTime(localSeconds: localSeconds)
        self.init(
            year: wall.year, month: wall.month - 1, day: wall.day, hour: wall.hour, minute: wall.minute,
            second: wall.second, isDST: isDST)
    }

    /// `tm_wday` of the (normalised) date: 0 = Sunday.
    var weekday: Int { CivilDate.weekday(days: CivilDate.days(year: year, month: month + 1, day: day)) }
}

/// glibc's `localtime_r` and `mktime` (time/mktime.c, glibc 2.36) for one
/// zone, or `gmtime_r` and `timegm` when the zone is UTC by arithmetic.
///
/// `mktime` must be emulated, not replaced by a "correct" conversion:
/// systemd's calendar search leans on how it resolves wall times that do
/// not exist (a spring-forward gap: a time one gap away) or exist twice (a
/// fall-back overlap: the one whose offset matches the previous call's
/// result — glibc keeps that offset in a static variable, here
/// ``offsetGuess``). That is what decides which occurrences systemd fires
/// around clock changes.
struct LocalClock {
    let rules: ZoneRules
    /// glibc's `localtime_offset`: UTC minus local time of the last result.
    var offsetGuess: Int64 = 0

    init(rules: ZoneRules) {
        self.rules = rules
    }

    var isUTC: Bool { rules.zone == nil }

    /// `localtime_r` (or `gmtime_r`).
    func localTime(_ t: Int64) -> BrokenDownTime {
        BrokenDownTime(localSeconds: rules.localSeconds(at: t), isDST: rules.isDaylightSavingTime(at: t) ? 1 : 0)
    }

    /// `mktime` (or `timegm`): the instant `tm` names, with `tm` normalised
    /// to it; nil where glibc fails (it leaves `tm` alone then).
    mutating func makeTime(_ tm: inout BrokenDownTime) -> Int64? {
        let requested = tm.localSeconds
        if isUTC {
            tm = BrokenDownTime(localSeconds: requested, isDST: 0)
            return requested
        }
        let isDST = tm.isDST
        // The first probe assumes the offset of the last result.
        let t0 = requested + offsetGuess
        var t = t0
        var t1 = t0
        var t2 = t0
        var previousWasDST = false
        var probes = 6
        var converted: BrokenDownTime
        var found = false
        while true {
            converted = localTime(t)
            let difference = requested - converted.localSeconds
            if difference == 0 { break }
            let convertedIsDST = converted.isDST != 0
            if t == t1 && t != t2
                && (isDST < 0 ? (previousWasDST ? 1 : 0) <= (convertedIsDST ? 1 : 0) : (isDST != 0) != convertedIsDST)
            {
                // Oscillating around a gap: take this probe, one gap away.
                found = true
                break
            }
            probes -= 1
            if probes == 0 { return nil }
            t1 = t2
            t2 = t
            t += difference
            previousWasDST = convertedIsDST
        }
        if !found && Self.isDSTDiffer(isDST, converted.isDST) {
            // The wall time matched with the wrong tm_isdst: look for a time
            // a week, two weeks, … away with the right one and use its offset.
            let stride: Int64 = 601_200
            let bound: Int64 = 536_454_000 / 2 + stride
            var delta = stride
            search: while delta < bound {
                for direction: Int64 in [-1, 1] {
                    let other = t + delta * direction
                    let otherTime = localTime(other)
                    if !Self.isDSTDiffer(isDST, otherTime.isDST) {
                        let guess = other + (requested - otherTime.localSeconds)
                        converted = localTime(guess)
                        t = guess
                        found = true
                        break search
                    }
                }
                delta += stride
            }
            if !found { return nil }
        }
        offsetGuess = t - requested
        tm = converted
        return t
    }

    /// glibc's `isdst_differ`: both known and one DST, the other not.
    static func isDSTDiffer(_ a: Int, _ b: Int) -> Bool {
        (a == 0) != (b == 0) && a >= 0 && b >= 0
    }
}
