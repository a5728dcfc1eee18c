import Foundation

/// A time zone's offsets from UTC, read the way the schedule math needs
/// them: in whole seconds, at instants given as seconds since the epoch.
///
/// `zone == nil` is UTC by arithmetic alone (what `timegm` and `gmtime` do).
struct ZoneRules: Sendable {
    let zone: TimeZone?
    /// glibc's `tm_isdst` of each offset (see ``DaylightSavingFlags``).
    let daylightSavingFlags: [Int64: Bool]

    init(_ zone: TimeZone?) {
        // The zones that were always UTC take the arithmetic path.
        if let zone, !Self.utcNames.contains(zone.identifier) {
            self.zone = zone
            self.daylightSavingFlags = DaylightSavingFlags.flags(for: zone.identifier)
        } else {
            self.zone = nil
            self.daylightSavingFlags = [:]
        }
    }

    static let utc = ZoneRules(nil)
    static let utcNames: Set<String> = [
        "UTC", "GMT", "Etc/UTC", "Etc/GMT", "Etc/Universal", "Etc/Zulu", "Universal", "Zulu",
    ]

    /// Seconds east of UTC at instant `t`.
    func offset(at t: Int64) -> Int64 {
        guard let zone else { return 0 }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t))))
    }

    /// Whether daylight saving time is in effect at instant `t`, as glibc's
    /// `tm_isdst` says.
    func isDaylightSavingTime(at t: Int64) -> Bool {
        guard let zone else { return false }
        if let flag = daylightSavingFlags[offset(at: t)] { return flag }
        return zone.isDaylightSavingTime(for: Date(timeIntervalSince1970: TimeInterval(t)))
    }

    /// The wall time the zone shows at instant `t`, as seconds on its clock.
    func localSeconds(at t: Int64) -> Int64 { t + offset(at: t) }

    /// The instant a wall time names, for schedules that fire once per wall
    /// time: the earlier instant when a fall-back overlap shows it twice; in
    /// a spring-forward gap, where it does not exist, the instant the gap
    /// ends (the first instant after it).
    ///
    /// Non-decreasing in `wall`: a later wall time never maps to an earlier
    /// instant. Assumes no two offset changes within two days of each other.
    func firstInstant(ofWall wall: Int64) -> Int64 {
        guard zone != nil else { return wall }
        let before = offset(at: wall - CivilDate.secondsPerDay)
        let after = offset(at: wall + CivilDate.secondsPerDay)
        var best: Int64?
        for candidate in [before, after, offset(at: wall)] {
            let instant = wall - candidate
            if offset(at: instant) == candidate, best.map({ instant < $0 }) ?? true { best = instant }
        }
        if let best { return best }
        // A gap: the change lies in (wall - max, wall - min]; find its instant.
        var low = wall - max(before, after)
        var high = wall - min(before, after)
        let lowOffset = offset(at: low)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if offset(at: middle) == lowOffset { low = middle } else { high = middle }
        }
        return high
    }

    /// The largest and smallest offsets in effect within a day of `t`.
    func offsetBounds(near t: Int64) -> (lowest: Int64, highest: Int64) {
        let offsets = [offset(at: t - CivilDate.secondsPerDay), offset(at: t), offset(at: t + CivilDate.secondsPerDay)]
        return (offsets.min() ?? 0, offsets.max() ?? 0)
    }
}
