import JobProcesses
import Testing

/// A process named in messages (a multi-line `shell:` was named
/// by its first line, with nothing to say that more followed).
@Suite struct ProcessNameTests {
    @Test func aMultiLineShellIsNamedWithAnEllipsis() {
        #expect(ProcessSpec.Command.shell("set -e\nrm -rf /tmp/x").displayName == "sh -c 'set -e …'")
        #expect(ProcessSpec.Command.shell("echo hi").displayName == "sh -c 'echo hi'")
    }
}
