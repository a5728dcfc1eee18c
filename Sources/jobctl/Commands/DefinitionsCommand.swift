import ArgumentParser
import JobConfig
import JobControl
import JobValues

struct Definitions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "definitions",
        abstract: "List the job definitions jobd loads.",
        discussion: """
            The definitions folder of jobd.yaml (`definitions:`), each with its pool, timeout, stages and \
            description. A file with errors contributes no definition; stderr then says how many problems \
            there are (jobctl validate lists them).

            Examples:
              jobctl definitions
              jobctl definitions --json | jq -r '.definitions[].name'
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let config = try session.daemonConfig()
            let set = session.definitions(of: config)
            if session.json {
                session.console.out(
                    JSON.fields([
                        ("folder", .string(config.definitions)),
                        ("definitions", .array(set.definitions.map(Self.json))),
                        ("problems", .int(set.diagnostics.count)),
                    ]).pretty)
            } else if set.definitions.isEmpty {
                session.console.note("no job definitions in \(config.definitions)")
            } else {
                var table = Table(
                    ["NAME", "POOL", "STAGES", "TIMEOUT", "DESCRIPTION"],
                    alignments: [.left, .left, .right, .left, .left])
                for definition in set.definitions {
                    table.add([
                        Table.Cell(definition.name), Table.Cell(definition.pool),
                        Table.Cell(String(definition.stages.count)),
                        Table.Cell(definition.timeout?.jobdText ?? "-"),
                        Table.Cell(Formatting.oneLine(definition.description ?? "")),
                    ])
                }
                session.console.out(table.render(session.console))
            }
            session.noteUnloaded(set, of: config)
        }
    }

    static func json(_ definition: JobDefinition) -> JSON {
        .fields([
            ("name", .string(definition.name)),
            ("pool", .string(definition.pool)),
            ("description", .optional(definition.description)),
            ("timeout", .optional(definition.timeout?.jobdText)),
            ("file", .string(definition.sourcePosition.path)),
            (
                "stages",
                .array(
                    definition.stages.map { stage in
                        .fields([
                            ("position", .int(stage.position)),
                            ("name", .string(stage.name)),
                            ("kind", .string(stage.kind.rawValue)),
                            ("action", .string(stage.action.keyword)),
                        ])
                    })
            ),
        ])
    }
}
