import Foundation

/// The zone a schedule without `timezone:` is read in: this host's, as
/// glibc (and systemd) find it — `$TZ`, else `/etc/localtime`.
public struct HostTimeZone: Sendable, Hashable {
    public var zone: TimeZone
    /// Why `$TZ` was not used, when it is set to something jobd cannot
    /// read: a sentence that names it, the zone used instead and what to do.
    public var problem: String?

    /// This process's host zone.
    public static var current: HostTimeZone { HostTimeZone(environment: ProcessInfo.processInfo.environment) }

    /// The zone `environment`'s `TZ` names:
    ///
    /// - unset, or `:` alone: `/etc/localtime`;
    /// - empty: UTC (as glibc reads it);
    /// - `Area/City` or `:Area/City` (glibc's form): that zone of the tz
    ///   database;
    /// - `:/path` or `/path`: the zone file at that path, when it lies in
    ///   the tz database (`/usr/share/zoneinfo/Europe/Berlin`) or is
    ///   `/etc/localtime`.
    ///
    /// Anything else — a POSIX rule string (`CET-1CEST,M3.5.0,M10.5.0/3`),
    /// a name the tz database does not have — leaves `/etc/localtime`'s
    /// zone in force, and ``problem`` says so.
    public init(environment: [String: String]) {
        guard var name = environment["TZ"] else {
            zone = Self.localTime()
            return
        }
        guard !name.isEmpty else {
            zone = TimeZone(identifier: "UTC") ?? Self.localTime()
            return
        }
        let written = name
        if name.hasPrefix(":") { name.removeFirst() }
        if name.isEmpty || name == ScheduleTimeZone.localTimePath {
            zone = Self.localTime()
            return
        }
        let reason: String
        if name.hasPrefix("/") {
            if let inDatabase = ScheduleTimeZone.linkedName(name), let named = ScheduleTimeZone.named(inDatabase) {
                zone = named
                return
            }
            reason = "is not a zone file of \(ScheduleTimeZone.databasePath)"
        } else {
            switch ScheduleTimeZone.lookup(name) {
            case let .success(named):
                zone = named
                return
            case let .failure(error):
                let isRule =
                    !written.hasPrefix(":") && name.utf8.contains { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                reason = isRule ? "is a POSIX rule string, which jobd does not read" : "is \(error.reason)"
            }
        }
        zone = Self.localTime()
        problem =
            "TZ=\"\(written)\" \(reason): schedules without timezone: are read in \(zone.identifier) "
            + "(\(ScheduleTimeZone.localTimePath)); set TZ to a name of the tz database such as Europe/Berlin, "
            + "or give each schedule a timezone:"
    }

    /// `/etc/localtime`'s zone: the tz database file it links to, else
    /// Foundation's reading of it.
    static func localTime() -> TimeZone {
        if let name = ScheduleTimeZone.linkedName(ScheduleTimeZone.localTimePath),
            let zone = ScheduleTimeZone.named(name)
        {
            return zone
        }
        return TimeZone.current
    }
}
