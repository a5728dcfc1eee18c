import JobConfig
import JobValues
import Testing

@Suite struct HTTPListenAddressTests {
    @Test(arguments: [
        ("127.0.0.1:9464", HTTPListenAddress.tcp(host: "127.0.0.1", port: 9464)),
        ("0.0.0.0:80", .tcp(host: "0.0.0.0", port: 80)),
        ("localhost:9464", .tcp(host: "127.0.0.1", port: 9464)),
        ("[::1]:9464", .tcp(host: "::1", port: 9464)),
        ("[::]:65535", .tcp(host: "::", port: 65535)),
        (" 127.0.0.1:1 ", .tcp(host: "127.0.0.1", port: 1)),
        ("unix:/run/jobd/http.sock", .unix(path: "/run/jobd/http.sock")),
    ])
    func parses(_ text: String, _ expected: HTTPListenAddress) throws {
        #expect(try HTTPListenAddress.parse(text) == expected)
    }

    @Test func relativeUnixPathsResolveAgainstTheConfigFolder() throws {
        #expect(
            try HTTPListenAddress.parse("unix:../var/http.sock", relativeTo: "/etc/jobd")
                == .unix(path: "/etc/var/http.sock"))
        #expect(try HTTPListenAddress.parse("unix:/abs.sock", relativeTo: "/etc/jobd") == .unix(path: "/abs.sock"))
    }

    @Test(arguments: [
        ("", HTTPListenAddressError.Code.empty, "is empty"),
        ("127.0.0.1", .missingPort, "has no port; write 127.0.0.1:9464"),
        ("[::1]", .missingPort, "has no port; write [::1]:9464"),
        ("::1:9464", .badHost, "without brackets; write [::1]:9464"),
        ("[::1:9464", .badHost, "no ']'"),
        ("[127.0.0.1]:80", .badHost, "is not an IPv6 address"),
        ("example.com:80", .badHost, "'example.com' is not an IP address"),
        ("256.1.1.1:80", .badHost, "'256.1.1.1' is not an IP address"),
        ("127.0.0.1:0", .badPort, "'0' is not a port"),
        ("127.0.0.1:65536", .badPort, "within 1…65535"),
        ("127.0.0.1:http", .badPort, "'http' is not a port"),
        ("127.0.0.1:", .badPort, "'' is not a port"),
        ("unix:", .badPath, "names no path"),
        ("unix:/run/jobd/", .badPath, "names a folder"),
        (
            "unix:/" + String(repeating: "x", count: 103), .badPath,
            "has a path of 104 bytes; a unix socket path has at most 103"
        ),
        ("unix:/tmp", .badPath, "names a folder; name the socket file: unix:/tmp/http.sock"),
        ("unix:.", .badPath, "names a folder"),
        ("unix:sockets/", .badPath, "names a folder"),
        ("http://127.0.0.1:9464", .badHost, "is a URL; give the address alone: 127.0.0.1:9464"),
        ("http://[::1]:9464/metrics", .badHost, "is a URL; give the address alone: [::1]:9464"),
        ("127.0.0.1:+80", .badPort, "'+80' is not a port"),
    ])
    func refusesWithAMessageThatSaysWhatToWrite(_ text: String, _ code: HTTPListenAddressError.Code, _ fragment: String)
    {
        #expect {
            try HTTPListenAddress.parse(text)
        } throws: { error in
            guard let error = error as? HTTPListenAddressError else { return false }
            return error.code == code && error.message.hasPrefix("http.listen '\(text)' ")
                && error.message.contains(fragment)
        }
    }

    @Test func theLongestUnixPathIsOneTheListenerTakes() throws {
        let path = "/" + String(repeating: "x", count: HTTPListenAddress.maxUnixPathBytes - 1)
        #expect(try HTTPListenAddress.parse("unix:" + path) == .unix(path: path))
    }

    @Test func describesItselfAsWritten() throws {
        for text in ["127.0.0.1:9464", "[::1]:9464", "unix:/run/jobd/http.sock"] {
            #expect(try HTTPListenAddress.parse(text).description == text)
        }
    }
}
