import Foundation
import Glibc
import Spawn

/// A network namespace of its own for a server or a "host" in a test. A
/// host's namespace is linked to a server's by a veth pair made directly in
/// the two namespaces, so a process run in it (``command(_:)``) reaches the
/// server only over TCP, at ``gateway``; the test's own namespace sees no
/// interface or address come and go, so nothing else on the machine (other
/// tests, the machine's own network) notices the test's network. Needs
/// root and iproute2 (`ip netns`, `ip link`). Removed by ``remove()``, or,
/// should the test process die first, by a watchdog that outlives it by a
/// second.
public final class NetworkNamespace: Sendable {
    public static let ip = "/usr/sbin/ip"

    public let name: String
    /// A host's: the address of the server's end of its link.
    public let gateway: String
    /// A host's: its own address.
    public let address: String
    /// A host's: its end of the link.
    public let link: String

    /// The network the links live in: 198.18.0.0/15, set aside for
    /// benchmark tests (RFC 2544). Each link has a /24 of it, picked by pid
    /// and index so that test processes running at once do not clash.
    public static let network = "198.18.0.0/15"

    /// A server's namespace: only its loopback.
    public convenience init(server: ()) throws(TestPostgresError) {
        try self.init(name: "jobd-\(getpid())-s", gateway: "", address: "", link: "") {}
    }

    /// Host `index` (0–3) of this test process, linked to `server`.
    public convenience init(index: Int, linkedTo server: NetworkNamespace) throws(TestPostgresError) {
        guard (0..<4).contains(index) else { throw TestPostgresError("namespace index \(index) is not in 0–3") }
        let block = Int(getpid()) % 128 * 4 + index
        let prefix = "198.\(18 + block / 256).\(block % 256)"
        let name = "jobd-\(getpid())-\(index)"
        let (outer, inner) = ("jv\(index)s", "jv\(index)h")
        try self.init(name: name, gateway: prefix + ".1", address: prefix + ".2", link: inner) {
            () throws(TestPostgresError) in
            try Self.run([
                "-n", server.name, "link", "add", outer, "type", "veth", "peer", "name", inner, "netns", name,
            ])
            try Self.run(["-n", server.name, "addr", "add", prefix + ".1/24", "dev", outer])
            try Self.run(["-n", server.name, "link", "set", outer, "up"])
            try Self.run(["-n", name, "addr", "add", prefix + ".2/24", "dev", inner])
            try Self.run(["-n", name, "link", "set", inner, "up"])
        }
    }

    private init(
        name: String, gateway: String, address: String, link: String, links: () throws(TestPostgresError) -> Void
    ) throws(TestPostgresError) {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: Self.ip) else {
            throw TestPostgresError("network namespaces need root and \(Self.ip) (Debian's iproute2)")
        }
        self.name = name
        self.gateway = gateway
        self.address = address
        self.link = link
        Self.watch(name: name)
        do {
            try Self.run(["netns", "add", name])
            try Self.run(["-n", name, "link", "set", "lo", "up"])
            try links()
        } catch {
            remove()
            throw error
        }
    }

    /// `argv` run inside the namespace (`ip netns exec` becomes the program: same pid).
    public func command(_ argv: [String]) -> [String] {
        [Self.ip, "netns", "exec", name] + argv
    }

    /// A host's: takes its link down (`up: false`), cutting it off from the
    /// server without a packet of goodbye, or brings it back up.
    public func setLink(up: Bool) throws(TestPostgresError) {
        try Self.run(["-n", name, "link", "set", link, up ? "up" : "down"])
    }

    /// Deletes the namespace (and its links' ends there, which takes their peers along).
    public func remove() {
        _ = try? Self.run(["netns", "del", name])
    }

    private static func run(_ arguments: [String]) throws(TestPostgresError) {
        try TestPostgres.run(ip, arguments, asPostgres: false)
    }

    private static func watch(name: String) {
        _ = try? SpawnedProcess(
            "/bin/sh",
            [
                "-c",
                """
                while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
                \(ip) netns del \(name) 2>/dev/null
                """,
            ], lifetime: .outlivesOwner)
    }
}
