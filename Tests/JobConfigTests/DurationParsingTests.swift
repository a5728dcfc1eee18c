import JobConfig
import JobValues
import Testing

@Suite struct DurationParsingTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)),
        ("30s", .seconds(30)),
        ("5m", .seconds(300)),
        ("2h", .seconds(7_200)),
        ("1d", .seconds(86_400)),
        ("0s", .zero),
        ("1m30s", .seconds(90)),
        ("1h30m", .seconds(5_400)),
        ("2s500ms", .milliseconds(2_500)),
        ("1d2h3m4s5ms", .milliseconds(93_784_005)),
        ("  45s\n", .seconds(45)),
        ("007s", .seconds(7)),
    ])
    func parsesValidDurations(text: String, expected: Duration) throws {
        #expect(try Duration(parsing: text) == expected)
    }

    @Test(arguments: [
        ("", ValueParseError.Code.empty),
        ("   ", .empty),
        ("30", .missingUnit),
        ("-5s", .negative),
        ("5x", .unknownUnit),
        ("5sec", .unknownUnit),
        ("5S", .unknownUnit),
        ("1.5s", .malformed),
        ("5 s", .malformed),
        ("+5s", .malformed),
        ("s", .malformed),
        ("30s1m", .malformed),
        ("1m1m", .malformed),
        ("1m-3s", .malformed),
        ("9223372036854775808ms", .overflow),
        ("106751991168d", .overflow),
        ("99999999999999999999999s", .overflow),
    ])
    func rejectsInvalidDurations(text: String, code: ValueParseError.Code) {
        #expect {
            try Duration(parsing: text)
        } throws: { error in
            guard let error = error as? ValueParseError else { return false }
            return error.code == code && error.input == text
        }
    }

    @Test func errorMessageSaysWhatAndHow() {
        do throws(ValueParseError) {
            _ = try Duration(parsing: "10 minutes")
            Issue.record("parsed")
        } catch {
            #expect(error.description.hasPrefix("invalid duration \"10 minutes\""))
            #expect(error.description.contains("e.g. 250ms"))
        }
    }

    /// Ten years is the longest duration read: a longer timeout or delay
    /// would overflow what a timer or a timestamp can hold (a
    /// `timeout: 9223372036854775s` crashed jobd when the job started).
    @Test func tenYearsIsTheLongest() throws {
        #expect(try Duration(parsing: "3650d") == Duration.jobdMaximum)
        #expect(try Duration(parsing: "3649d23h59m59s999ms") < Duration.jobdMaximum)
        for text in ["3650d1ms", "3651d", "9223372036854775s", "9223372036854775807ms", "106751991167d"] {
            #expect {
                try Duration(parsing: text)
            } throws: { error in
                let error = error as? ValueParseError
                return error?.code == .overflow && error?.reason.contains("at most 3650d") == true
            }
        }
    }

    @Test(arguments: ["0s", "250ms", "30s", "1m30s", "1d", "1d1ms", "2h5m"])
    func textRoundTrips(text: String) throws {
        let duration = try Duration(parsing: text)
        #expect(duration.jobdText == text)
        #expect(try Duration(parsing: duration.jobdText) == duration)
    }

    @Test func formatsInLargestUnits() {
        #expect(Duration.seconds(90).jobdText == "1m30s")
        #expect(Duration.milliseconds(1_500).jobdText == "1s500ms")
        #expect(Duration.seconds(86_400 * 2).jobdText == "2d")
    }
}

@Suite struct ByteSizeParsingTests {
    @Test(arguments: [
        ("512", 512), ("512B", 512), ("1KiB", 1_024), ("1MiB", 1_048_576), ("2GiB", 2_147_483_648),
        ("64KB", 64_000), ("1MB", 1_000_000), ("3GB", 3_000_000_000), ("0", 0),
    ])
    func parsesSizes(text: String, bytes: Int) throws {
        #expect(try ByteSize(parsing: text).bytes == bytes)
    }

    @Test(arguments: [
        ("", ValueParseError.Code.empty), ("-1MiB", .negative), ("1mib", .unknownUnit), ("1 MiB", .unknownUnit),
        ("MiB", .malformed), ("1.5MiB", .malformed), ("9999999999999999999GiB", .overflow),
    ])
    func rejectsBadSizes(text: String, code: ValueParseError.Code) {
        #expect {
            try ByteSize(parsing: text)
        } throws: { ($0 as? ValueParseError)?.code == code }
    }

    @Test func describesInBinaryUnits() {
        #expect(ByteSize(bytes: 1_048_576).description == "1MiB")
        #expect(ByteSize(bytes: 1_500).description == "1500B")
        #expect(ByteSize(bytes: 0).description == "0B")
    }
}
