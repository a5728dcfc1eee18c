import JobConfig
import JobProcesses
import Testing

@testable import JobEngine

@Suite("ProcessSpec.Command from an Action")
struct ProcessCommandTests {
    @Test func runAndShellMapOthersDoNot() {
        #expect(ProcessSpec.Command(.run(["cat", "-n"])) == .argv(["cat", "-n"]))
        #expect(ProcessSpec.Command(.shell("echo hi")) == .shell("echo hi"))
        #expect(ProcessSpec.Command(.fail("no")) == nil)
        #expect(ProcessSpec.Command(.shell("x")).map(\.arguments) == ["/bin/sh", "-c", "x"])
    }
}
