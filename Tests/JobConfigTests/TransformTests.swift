import JobConfig
import Testing

private func apply(_ transform: Transform, _ input: String) throws -> String {
    String(decoding: try transform.apply(Array(input.utf8)), as: UTF8.self)
}

private func json(_ path: String, _ input: String) throws -> String {
    try apply(.json(JSONPath(parsing: path)), input)
}

private func expectTransformError(
    _ code: TransformError.Code, _ body: () throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(sourceLocation: sourceLocation) {
        try body()
    } throws: { ($0 as? TransformError)?.code == code }
}

@Suite struct TextTransformTests {
    @Test func trimDropsWhitespaceAndNewlinesAtBothEnds() throws {
        #expect(try apply(.trim, " \t\n hello  world \r\n\n") == "hello  world")
        #expect(try apply(.trim, "\u{00A0}x\u{2003}") == "x")
        #expect(try apply(.trim, " \n ") == "")
        #expect(try apply(.trim, "") == "")
        #expect(try apply(.trim, "naïve") == "naïve")
    }

    @Test func upperAndLowerMapUnicode() throws {
        #expect(try apply(.upper, "hello, wörld\n") == "HELLO, WÖRLD\n")
        #expect(try apply(.upper, "straße") == "STRASSE")
        #expect(try apply(.lower, "ÀB C") == "àb c")
    }

    @Test(arguments: [Transform.trim, .upper, .lower])
    func textTransformsRejectInvalidUTF8(transform: Transform) {
        #expect {
            try transform.apply([0x66, 0x6F, 0xFF, 0x6F])
        } throws: { error in
            guard let error = error as? TransformError else { return false }
            return error.code == .notUTF8 && error.message.contains("\(transform)") && error.message.contains("UTF-8")
        }
    }
}

@Suite struct JSONTransformTests {
    let document =
        #"{"total": 42, "ratio": 1.50, "big": 12345678901234567890, "exp": 1e3, "name": "sales \"Q1\"\n", "#
        + #""ok": true, "none": null, "items": [{"id": 7}, {"id": 8}], "nested": {"b": [1, "two"], "a": {}}, "#
        + #""odd key": "x", "uni": "\u00e9\ud83d\ude00"}"#

    @Test func wholeDocumentIsCompactedInInputOrder() throws {
        #expect(try json(".", #" { "b" : [ 1 , 2 ] , "a" : "x" } "#) == #"{"b":[1,2],"a":"x"}"#)
    }

    @Test func numbersKeepTheirText() throws {
        #expect(try json(".total", document) == "42")
        #expect(try json(".ratio", document) == "1.50")
        #expect(try json(".big", document) == "12345678901234567890")
        #expect(try json(".exp", document) == "1e3")
        #expect(try json(".", "-0.5") == "-0.5")
    }

    @Test func stringsComeOutRawAndUnescaped() throws {
        #expect(try json(".name", document) == "sales \"Q1\"\n")
        #expect(try json(".uni", document) == "é😀")
    }

    @Test func literalsAndContainers() throws {
        #expect(try json(".ok", document) == "true")
        #expect(try json(".none", document) == "null")
        #expect(try json(".items", document) == #"[{"id":7},{"id":8}]"#)
        #expect(try json(".nested", document) == #"{"b":[1,"two"],"a":{}}"#)
        #expect(try json(".items[1].id", document) == "8")
        #expect(try json(".items[-1].id", document) == "8")
        #expect(try json(".nested.b[1]", document) == "two")
        #expect(try json(#"."odd key""#, document) == "x")
        #expect(try json(#".["odd key"]"#, document) == "x")
        #expect(try json(".[1]", "[10, 20]") == "20")
    }

    @Test func nestedStringsAreReEscaped() throws {
        #expect(try json(".a", #"{"a": ["tab\there", "q\"", "\u0001"]}"#) == #"["tab\there","q\"","\u0001"]"#)
    }

    @Test func duplicateKeysTakeTheLast() throws {
        #expect(try json(".a", #"{"a": 1, "a": 2}"#) == "2")
    }

    @Test(arguments: [".missing", ".items[2]", ".items[-3]", ".total.x", ".items.id", ".name[0]"])
    func missingPathsAreErrors(path: String) {
        expectTransformError(.pathNotFound) { _ = try json(path, document) }
    }

    @Test(arguments: [
        "", "   ", "{", #"{"a": 1,}"#, "[1 2]", "01", "1.", "-", "+1", "tru", "nul", #"{'a': 1}"#,
        #""unterminated"#, "\"ctl\u{01}\"", #""\x""#, #""\ud800""#, #""\u12g4""#, "{} {}", "NaN",
    ])
    func invalidJSONIsAnError(input: String) {
        expectTransformError(.invalidJSON) { _ = try json(".", input) }
    }

    @Test func errorsSayWhere() {
        do throws(TransformError) {
            _ = try Transform.json(JSONPath(parsing: ".")).apply(Array("{\n  \"a\": 1\n  \"b\": 2\n}".utf8))
            Issue.record("parsed")
        } catch {
            #expect(error.message.contains("line 3"), "\(error)")
        }
    }

    @Test func deepNestingIsRefusedNotCrashed() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        expectTransformError(.invalidJSON) { _ = try json(".", deep) }
        let fine = String(repeating: "[", count: 100) + "1" + String(repeating: "]", count: 100)
        #expect((try? json(".", fine)) == fine)
    }

    @Test func nonUTF8InputIsRejected() {
        expectTransformError(.notUTF8) { _ = try Transform.json(JSONPath(parsing: ".")).apply([0x22, 0xC3, 0x22]) }
    }
}

@Suite struct JSONPathTests {
    @Test(arguments: [
        (".", [JSONPath.Component]()),
        (".a", [.key("a")]),
        (".a.b-c_d", [.key("a"), .key("b-c_d")]),
        (".items[0]", [.key("items"), .index(0)]),
        (".[2][-1]", [.index(2), .index(-1)]),
        (#"."a b".c"#, [.key("a b"), .key("c")]),
        (#".["x.y"]"#, [.key("x.y")]),
    ])
    func parsesPaths(text: String, components: [JSONPath.Component]) throws {
        #expect(try JSONPath(parsing: text).components == components)
    }

    @Test(arguments: ["", "a", "..a", ".a.", ".a[", ".a[x]", ".a[1", ".a b", "a.b", #"."unterminated"#, ".a]"])
    func rejectsBadPaths(text: String) {
        #expect {
            try JSONPath(parsing: text)
        } throws: { ($0 as? TransformError)?.code == .invalidPath }
    }

    @Test(arguments: [".", ".a.b", ".items[0].id", #"."a b""#, ".[3]"])
    func descriptionRoundTrips(text: String) throws {
        let path = try JSONPath(parsing: text)
        #expect(path.description == text)
        #expect(try JSONPath(parsing: path.description) == path)
    }
}
