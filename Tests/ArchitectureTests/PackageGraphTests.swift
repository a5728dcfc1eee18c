import Foundation
import TestSupport
import Testing

/// Package.swift held to docs/architecture.md: every target but the test
/// targets has a row in the page's module tables, and depends only on what
/// its row says it may import.
@Suite struct PackageGraphTests {
    static let manifest = repositoryRoot + "/Package.swift"
    static let page = repositoryRoot + "/docs/architecture.md"

    @Test func everyTargetImportsOnlyWhatTheArchitecturePageAllows() throws {
        let allowed = try ModuleTable.read(Self.page)
        let targets = try Manifest.read(Self.manifest)
        #expect(!targets.isEmpty, "no target found in \(Self.manifest)")
        for target in targets where target.kind != "testTarget" {
            guard let mayImport = allowed[target.name] else {
                Issue.record("target \(target.name) has no row in docs/architecture.md")
                continue
            }
            let outside = target.dependencies.filter { !mayImport.contains($0) }
            #expect(
                outside.isEmpty,
                "\(target.name) depends on \(outside.joined(separator: ", ")), which its row in docs/architecture.md does not allow"
            )
        }
        let names = Set(targets.map(\.name))
        for documented in allowed.keys.sorted() where !names.contains(documented) {
            Issue.record("docs/architecture.md has a row for \(documented), which Package.swift has no target for")
        }
    }

    /// What the page promises in words, checked on the manifest itself (so
    /// that a row edited to allow it does not hide it).
    @Test func theContractImportsNoDatabaseAndTheConfigurationNoStore() throws {
        let targets = Dictionary(uniqueKeysWithValues: try Manifest.read(Self.manifest).map { ($0.name, $0) })
        func closure(_ name: String) -> Set<String> {
            var seen: Set<String> = []
            var queue = [name]
            while let next = queue.popLast() {
                for dependency in targets[next]?.dependencies ?? [] where seen.insert(dependency).inserted {
                    queue.append(dependency)
                }
            }
            return seen
        }
        let databases: Set = ["GRDB", "GRDBSQLite", "PostgresNIO"]
        #expect(
            closure("JobStore").isDisjoint(with: databases),
            "JobStore reaches \(closure("JobStore").intersection(databases))")
        let stores = closure("JobConfig").filter { $0.hasPrefix("JobStore") || $0 == "JobDatabase" }
        #expect(stores.isEmpty, "JobConfig reaches \(stores.sorted())")
        #expect(!closure("JobHTTP").contains("JobConfig"), "JobHTTP links JobConfig")
        let engineStores = closure("JobEngine").intersection(["JobStoreSQLite", "JobStorePostgres", "JobDatabase"])
        #expect(engineStores.isEmpty, "JobEngine reaches \(engineStores.sorted())")
    }

    @Test func theManifestReaderSeesTargetsProductsAndComments() throws {
        let targets = Manifest.parse(
            """
            .target(name: "A", dependencies: ["B", // "C" is a comment
                .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
            .testTarget(name: "ATests", dependencies: ["A"]),
            .executableTarget(name: "a-tool", path: "Tools/a-tool"),
            """)
        #expect(targets.map(\.name) == ["A", "ATests", "a-tool"])
        #expect(targets[0].dependencies == ["B", "GRDB"])
        #expect(targets[1].kind == "testTarget" && targets[2].dependencies.isEmpty)
    }

    @Test func theTableReaderSeesEveryRowAndANone() throws {
        let rows = ModuleTable.parse(
            """
            | module | what it is | may import |
            |---|---|---|
            | `A` | a module, `in code` too | `B`, `GRDB` |
            | `C` | a leaf | — |
            """)
        #expect(rows == ["A": ["B", "GRDB"], "C": []])
    }
}

/// The targets of Package.swift, read as text: each `.target(`,
/// `.executableTarget(` or `.testTarget(` call, its `name:` and the names in
/// its `dependencies:` (a target's name, or a product's `name:`).
enum Manifest {
    struct Target {
        var kind: String
        var name: String
        var dependencies: [String]
    }

    static func read(_ path: String) throws -> [Target] {
        parse(try String(contentsOfFile: path, encoding: .utf8))
    }

    static func parse(_ source: String) -> [Target] {
        let text = source.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { line[..<$0.lowerBound] } ?? line }
            .joined(separator: "\n")
        var targets: [Target] = []
        for kind in ["target", "executableTarget", "testTarget"] {
            var rest = text[...]
            while let call = rest.range(of: ".\(kind)(") {
                let body = balanced(text[call.upperBound...], open: "(", close: ")")
                rest = text[body.endIndex...]
                guard let name = firstQuoted(after: "name:", in: body) else { continue }
                var dependencies: [String] = []
                if let list = body.range(of: "dependencies:"),
                    let bracket = body[list.upperBound...].firstIndex(of: "[")
                {
                    var items = balanced(body[body.index(after: bracket)...], open: "[", close: "]")
                    while let quote = items.firstIndex(of: "\"") {
                        let before = items[..<quote]
                        let start = items.index(after: quote)
                        guard let end = items[start...].firstIndex(of: "\"") else { break }
                        // A product's `package:` names a package, not a dependency.
                        if !before.trimmingCharacters(in: .whitespaces).hasSuffix("package:") {
                            dependencies.append(String(items[start..<end]))
                        }
                        items = items[items.index(after: end)...]
                    }
                }
                targets.append(Target(kind: kind, name: name, dependencies: dependencies))
            }
        }
        let order = { (target: Target) in text.range(of: "name: \"\(target.name)\"")?.lowerBound ?? text.endIndex }
        return targets.sorted { order($0) < order($1) }
    }

    /// `text` up to the bracket that closes the one opened just before it.
    private static func balanced(_ text: Substring, open: Character, close: Character) -> Substring {
        var depth = 1
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == open { depth += 1 }
            if text[index] == close {
                depth -= 1
                if depth == 0 { return text[..<index] }
            }
            index = text.index(after: index)
        }
        return text
    }

    private static func firstQuoted(after label: String, in text: Substring) -> String? {
        guard let found = text.range(of: label) else { return nil }
        let rest = text[found.upperBound...]
        guard let open = rest.firstIndex(of: "\"") else { return nil }
        let start = rest.index(after: open)
        guard let end = rest[start...].firstIndex(of: "\"") else { return nil }
        return String(rest[start..<end])
    }
}

/// The module tables of docs/architecture.md: rows `| `Name` | what | `A`, `B` |`
/// (or `—` for none), read as each module's allowed imports.
enum ModuleTable {
    static func read(_ path: String) throws -> [String: Set<String>] {
        parse(try String(contentsOfFile: path, encoding: .utf8))
    }

    static func parse(_ text: String) -> [String: Set<String>] {
        var rows: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            // "", module, what it is, may import, ""
            guard cells.count >= 5 else { continue }
            let module = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            rows[module] = Set(codeSpans(cells[cells.count - 2]))
        }
        return rows
    }

    private static func codeSpans(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
