import Foundation
internal import Yams

/// Reads a YAML file into a Yams node tree, turning every way that can fail
/// into a diagnostic at the right place.
enum YAMLSource {
    /// The root node of `text`, nil when the document is empty or malformed
    /// (the diagnostics then say why).
    ///
    /// Scalars are composed with Yams' basic resolver, which tags every
    /// plain scalar as a string: the readers take scalars as written anyway
    /// (`NodeReader`), and so two mapping keys that read the same (`1` and
    /// `"1"`) are the duplicates they are for jobd. The default resolver
    /// would also compile seven regular expressions (ICU) on first use,
    /// milliseconds that every jobctl command paid.
    static func compose(_ text: String, path: String) -> (root: Node?, diagnostics: [Diagnostic]) {
        do {
            return (try Yams.compose(yaml: text, .basic, .default, .utf8), [])
        } catch let error as YamlError {
            return (nil, [diagnostic(for: error, in: text, path: path)])
        } catch {
            return (nil, [Diagnostic(code: .yamlSyntax, at: .file(path), "cannot parse YAML: \(error)")])
        }
    }

    private static func diagnostic(for error: YamlError, in text: String, path: String) -> Diagnostic {
        func at(_ mark: Mark) -> SourcePosition {
            SourcePosition(path: path, line: mark.line, column: mark.column)
        }
        func explain(_ problem: String, _ context: YamlError.Context?) -> String {
            guard let context else { return "YAML syntax: \(problem)" }
            return "YAML syntax: \(problem) (\(context.text) at \(context.mark.line):\(context.mark.column))"
        }
        switch error {
        case let .scanner(context, problem, mark, _),
            let .parser(context, problem, mark, _):
            if problem.contains("yaml_set_max_nest_level") {
                // libyaml's own words name its C API.
                return Diagnostic(
                    code: .yamlSyntax, at: at(mark),
                    "YAML nested too deeply: lists and mappings may nest at most \(maxNesting) levels")
            }
            return Diagnostic(code: .yamlSyntax, at: at(mark), explain(problem, context))
        case let .composer(context, problem, mark, _):
            if context?.text.contains("single document") == true {
                return Diagnostic(
                    code: .yamlSyntax, at: at(mark),
                    "a file holds one YAML document; remove the '---' that starts another")
            }
            return Diagnostic(code: .yamlSyntax, at: at(mark), explain(problem, context))
        case let .duplicatedKeysInMapping(duplicates, context):
            // Yams names the first occurrence of the first duplicate key;
            // the mistake is usually the repeat, so point there.
            let key = duplicates.first ?? ""
            let first = at(context.mark)
            let repeatAt = repeatedKey(key, firstAt: context.mark, in: text)
                .map { SourcePosition(path: path, line: $0.line, column: $0.column) }
            let earlier = repeatAt == nil ? "" : " (first at line \(first.line))"
            let others = duplicates.dropFirst().map { "'\($0)'" }
            let also = others.isEmpty ? "" : "; also repeated: " + others.joined(separator: ", ")
            return Diagnostic(
                code: .yamlSyntax, at: repeatAt ?? first,
                "duplicate key '\(key)'\(earlier): a key may appear once in a mapping\(also)")
        case let .reader(problem, offset, _, _):
            let position =
                offset.map { lineAndColumn(ofCharacterOffset: $0, in: text) }
                .map { SourcePosition(path: path, line: $0.line, column: $0.column) } ?? .file(path)
            return Diagnostic(code: .yamlSyntax, at: position, "cannot read YAML: \(problem)")
        default:
            return Diagnostic(code: .yamlSyntax, at: .file(path), "cannot parse YAML: \(error)")
        }
    }

    /// libyaml's default nesting limit (`yaml_set_max_nest_level`).
    static let maxNesting = 1000

    /// Where `key` is written again in the block mapping whose first use of it
    /// is at `first`: the next line below that starts with `key:` at the same
    /// column, before the mapping ends (a line indented less). Nil when the
    /// repeat cannot be found this way (a flow mapping `{a: 1, a: 2}`).
    static func repeatedKey(_ key: String, firstAt first: Mark, in text: String) -> (line: Int, column: Int)? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard first.line >= 1, first.line <= lines.count, first.column >= 1 else { return nil }
        let indent = first.column - 1
        for index in first.line..<lines.count {
            let line = Substring(lines[index])
            let content = line.drop { $0 == " " }
            if content.isEmpty || content.hasPrefix("#") { continue }
            let lineIndent = line.count - content.count
            if lineIndent < indent { return nil }
            guard lineIndent == indent else { continue }
            for spelling in [key, "\"\(key)\"", "'\(key)'"] where content.hasPrefix(spelling) {
                let rest = content.dropFirst(spelling.count).drop { $0 == " " }
                if rest.hasPrefix(":") { return (index + 1, indent + 1) }
            }
        }
        return nil
    }

    private static func lineAndColumn(ofCharacterOffset offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for character in text.prefix(offset) {
            if character.isNewline {
                line += 1
                column = 1
            } else {
                column += character.unicodeScalars.count
            }
        }
        return (line, column)
    }
}
