import Foundation
import Glibc
import Spawn

/// A network namespace of its own for a "host" in a test: a veth pair links
/// it to the test's namespace, so a process run in it (``command(_:)``)
/// reaches a server of the test only over TCP, at ``gateway``. Needs root
/// and iproute2 (`ip netns`, `ip link`). Removed by ``remove()``, or, should
/// the test process die first, by a watchdog that outlives it by a second.
public final class NetworkNamespace: Sendable {
    public static let ip = "/usr/sbin/ip"

    public let name: String
    /// The address of the test's end of the link: where the host reaches servers.
    public let gateway: String
    /// The host's own address.
    public let address: String
    private let outerLink: String

    /// The network the namespaces live in: 198.18.0.0/15, set aside for
    /// benchmark tests (RFC 2544), so no real network of the machine is
    /// shadowed. Each namespace has a /24 of it, picked by pid and index so
    /// that test processes running at once do not clash.
    public static let network = "198.18.0.0/15"

    /// Namespace `index` (0–3) of this test process.
    public init(index: Int) throws(TestPostgresError) {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: Self.ip) else {
            throw TestPostgresError("network namespaces need root and \(Self.ip) (Debian's iproute2)")
        }
        guard (0..<4).contains(index) else { throw TestPostgresError("namespace index \(index) is not in 0–3") }
        let block = Int(getpid()) % 128 * 4 + index
        let prefix = "198.\(18 + block / 256).\(block % 256)"
        name = "jobd-\(getpid())-\(index)"
        outerLink = "jv\(getpid() % 100_000)o\(index)"
        let innerLink = "jv\(getpid() % 100_000)i\(index)"
        gateway = prefix + ".1"
        address = prefix + ".2"
        Self.watch(name: name, link: outerLink)
        do {
            try Self.run(["netns", "add", name])
            try Self.run(["link", "add", outerLink, "type", "veth", "peer", "name", innerLink])
            try Self.run(["link", "set", innerLink, "netns", name])
            try Self.run(["addr", "add", gateway + "/24", "dev", outerLink])
            try Self.run(["link", "set", outerLink, "up"])
            try Self.run(["-n", name, "addr", "add", address + "/24", "dev", innerLink])
            try Self.run(["-n", name, "link", "set", innerLink, "up"])
            try Self.run(["-n", name, "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    /// `argv` run inside the namespace (`ip netns exec` becomes the program: same pid).
    public func command(_ argv: [String]) -> [String] {
        [Self.ip, "netns", "exec", name] + argv
    }

    /// Deletes the namespace and its link (both ends go with either).
    public func remove() {
        _ = try? Self.run(["link", "del", outerLink])
        _ = try? Self.run(["netns", "del", name])
    }

    private static func run(_ arguments: [String]) throws(TestPostgresError) {
        try TestPostgres.run(ip, arguments, asPostgres: false)
    }

    private static func watch(name: String, link: String) {
        _ = try? SpawnedProcess("/bin/sh", ["-c", """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(ip) link del \(link) 2>/dev/null; \(ip) netns del \(name) 2>/dev/null
            """], lifetime: .outlivesOwner)
    }
}
