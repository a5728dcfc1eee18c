import Foundation
import JobConfig
import Testing

/// Checks a job definition's text with the default context (queues `map`,
/// `return`, `slow`; pools `default`, `batch`).
func checkDefinition(_ yaml: String, path: String = "/defs/job.yaml") -> LoadResult<JobDefinition> {
    let context = DefinitionContext(queues: ["map", "return", "slow"], pools: ["default", "batch"])
    return DefinitionLoader(context: context).parse(yaml: yaml, path: path)
}

/// Expects exactly one diagnostic with `code` at `line` (and `column` if
/// given) whose message contains `text`.
func expectDiagnostic(
    _ diagnostics: [Diagnostic], _ code: Diagnostic.Code, line: Int, column: Int? = nil, contains text: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let matches = diagnostics.filter { $0.code == code && $0.position.line == line }
    #expect(
        matches.count == 1,
        "expected one \(code) at line \(line) among:\n\(diagnostics.map(\.description).joined(separator: "\n"))",
        sourceLocation: sourceLocation)
    guard let match = matches.first else { return }
    if let column {
        #expect(match.position.column == column, "column of \(match)", sourceLocation: sourceLocation)
    }
    #expect(
        text.isEmpty || match.message.contains(text), "message of \(match) lacks \"\(text)\"",
        sourceLocation: sourceLocation)
}
