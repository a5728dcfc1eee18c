import Foundation
import JobConfig
import TestSupport
import Testing

/// Stages that start child jobs: `each` and `then` with `definition:`,
/// their options, and the checks made across the definitions folder.
@Suite struct ChildDefinitionTests {
    @Test func eachTakesItsOptionsAndThenTakesOneChild() throws {
        let loader = DefinitionLoader(context: .defaults)
        let each = try loader.parse(
            yaml: """
                pipeline:
                  - each: fan
                    definition: resize
                    items: {json: .images}
                    settle: all
                    max-children: 50
                  - then: one
                    definition: resize
                """, path: "/d/p.yaml"
        ).get()
        guard case let .children(spec) = each.stages[0].action, case let .children(single) = each.stages[1].action
        else {
            Issue.record("not child stages: \(each.stages.map(\.action))")
            return
        }
        #expect(each.stages[0].kind == .each)
        #expect(spec.definition == "resize" && spec.settle == .all && spec.maxChildren == 50)
        #expect(spec.sourcePosition.line == 3 && spec.sourcePosition.column == 17)
        #expect(
            try spec.inputs(from: Array(#"{"images": ["a.png", {"x": 1}]}"#.utf8)) == [
                Array("a.png".utf8), Array(#"{"x":1}"#.utf8),
            ])
        #expect(single.items == .whole && single.settle == .failFast && single.maxChildren == 1)
        let lines = ChildSpec(definition: "x", items: .lines, settle: .failFast, sourcePosition: .file("/d"))
        #expect(try lines.inputs(from: Array("a\n\nb\n".utf8)) == [Array("a".utf8), [], Array("b".utf8)])
        #expect(try lines.inputs(from: []) == [])
    }

    @Test func badChildOptionsAreErrorsAtTheirPlace() {
        let loader = DefinitionLoader(context: .defaults)
        let bad = loader.parse(
            yaml: """
                pipeline:
                  - each: fan
                    definition: resize
                    settle: sometimes
                  - map: m
                    definition: resize
                  - then: t
                    run: [x]
                    items: lines
                """, path: "/d/bad.yaml")
        #expect(bad.value == nil)
        #expect(bad.diagnostics.map(\.code) == [.invalidValue, .actionNotAllowed, .actionNotAllowed])
        #expect(bad.diagnostics.map(\.position.line) == [4, 6, 9])
    }

    @Test func anUnknownDefinitionIsAnErrorAtItsFileLineAndColumn() throws {
        let folder = try makeTemporaryFolder()
        try "pipeline:\n  - then: a\n    run: [echo, a]\n".write(
            toFile: folder + "/resize.yaml", atomically: true, encoding: .utf8)
        try "pipeline:\n  - each: fan\n    definition: rezise\n".write(
            toFile: folder + "/parent.yaml", atomically: true, encoding: .utf8)
        try "pipeline:\n  - each: fan\n    definition: loop\n".write(
            toFile: folder + "/loop.yaml", atomically: true, encoding: .utf8)
        let set = DefinitionLoader(context: .defaults).loadFolder(folder)
        #expect(set.names == ["resize"])
        let unknown = try #require(set.diagnostics.first { $0.code == .unknownDefinition })
        #expect(unknown.description.hasPrefix("\(folder)/parent.yaml:3:17: error: no job definition named 'rezise'"))
        let cycle = try #require(set.diagnostics.first { $0.code == .childrenTooDeep })
        #expect(cycle.position.path == folder + "/loop.yaml" && cycle.position.line == 3)
    }
}
