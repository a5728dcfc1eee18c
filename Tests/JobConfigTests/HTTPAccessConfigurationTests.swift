import JobConfig
import JobValues
import Testing

/// `http:`'s access keys, and the listener other hosts can reach.
@Suite struct HTTPAccessConfigurationTests {
    let path = "/etc/jobd/jobd.yaml"

    @Test func aListenerOtherHostsReachNeedsAuthenticationOrPublicRead() throws {
        let diagnostics = DaemonConfiguration.parse(yaml: "http: { listen: 0.0.0.0:9464 }\n", path: path).diagnostics
        expectDiagnostic(
            diagnostics, .invalidValue, line: 1, contains: "which other hosts can reach, without authentication")
        #expect(diagnostics.count == 1)
        for allowed in [
            "public: read", "users: http-users", "users-credential: http-users", "trusted-proxies: [10.0.0.1]",
        ] {
            let config = try DaemonConfiguration.parse(yaml: "http: { listen: '[::]:9464', \(allowed) }\n", path: path)
                .get()
            #expect(config.http?.access.publicRead == (allowed == "public: read"))
        }
        // Loopback and unix sockets as before: no key needed, nothing changes.
        for local in ["127.0.0.1:9464", "'[::1]:9464'", "localhost:9464", "unix:/run/jobd/http.sock"] {
            let config = try DaemonConfiguration.parse(yaml: "http: { listen: \(local) }\n", path: path).get()
            #expect(config.http?.access == HTTPAccessConfiguration())
        }
    }

    @Test func theAccessKeys() throws {
        let config = try DaemonConfiguration.parse(
            yaml: """
                http:
                  listen: 127.0.0.1:9464
                  users: http-users
                  trusted-proxies: [127.0.0.1, "::1"]
                  session: 1h
                  operator-group: ops
                """, path: path
        ).get()
        let access = try #require(config.http?.access)
        #expect(access.users == .file("/etc/jobd/http-users"))
        #expect(access.trustedProxies == ["127.0.0.1", "::1"])
        #expect(access.sessionLifetime == .seconds(3600))
        #expect(access.operatorGroup == "ops")
        let bad = DaemonConfiguration.parse(
            yaml:
                "http: { listen: 127.0.0.1:1, public: write, trusted-proxies: [proxy.example], users-credential: a/b }\n",
            path: path
        ).diagnostics
        #expect(bad.count == 3, "\(bad)")
    }
}
