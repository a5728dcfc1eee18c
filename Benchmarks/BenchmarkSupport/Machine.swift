import Foundation

/// What the machine and a process are doing, from /proc: the context of a
/// figure on a shared machine.
public enum Machine {
    public static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The 1, 5 and 15 minute load averages.
    public static var loadAverage: String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }

    /// `2 cores, load average 3.10 2.95 2.40`.
    public static var summary: String { "\(cores) cores, load average \(loadAverage)" }

    /// User + system CPU time of this process, in seconds.
    public static func cpuSecondsOfThisProcess() -> Double {
        cpuSeconds(RUSAGE_SELF)
    }

    /// User + system CPU time of this process's children that were reaped, in seconds.
    public static func cpuSecondsOfReapedChildren() -> Double {
        cpuSeconds(RUSAGE_CHILDREN)
    }

    private static func cpuSeconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(who.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// User + system CPU time of process `pid`, in seconds.
    public static func cpuSeconds(of pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime and stime are 14 and 15.
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory of process `pid` (this one by default), in bytes.
    public static func residentBytes(of pid: Int32? = nil) -> Int {
        statusField("VmRSS", of: pid) * 1024
    }

    /// RssAnon / RssFile / RssShmem of process `pid`: heap versus mapped
    /// files (a database's shared-memory index is RssShmem or RssFile).
    public static func residentParts(of pid: Int32) -> String {
        ["RssAnon", "RssFile", "RssShmem"].map { "\($0) \(statusField($0, of: pid)) kB" }.joined(separator: ", ")
    }

    /// A `Name:   N kB` line of /proc/PID/status, in KiB.
    private static func statusField(_ name: String, of pid: Int32?) -> Int {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}

/// Bytes as MiB, one decimal: `35.6 MiB`.
public func mebibytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }
