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

    /// Reads `path` as UTF-8 text.
    static func read(path: String) -> (text: String?, diagnostics: [Diagnostic]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its permissions)" : "does not exist"
            return (nil, [Diagnostic(code: .unreadableFile, at: .file(path), "the file \(reason)")])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return (nil, [Diagnostic(code: .unreadableFile, at: .file(path), "the file is not UTF-8 text")])
        }
        return (text, [])
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
            return Diagnostic(code: .yamlSyntax, at: at(mark), explain(problem, context))
        case let .composer(context, problem, mark, _):
            if context?.text.contains("single document") == true {
                return Diagnostic(code: .yamlSyntax, at: at(mark),
                                  "a file holds one YAML document; remove the '---' that starts another")
            }
            return Diagnostic(code: .yamlSyntax, at: at(mark), explain(problem, context))
        case let .duplicatedKeysInMapping(duplicates, context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return Diagnostic(code: .yamlSyntax, at: at(context.mark),
                              "duplicate key \(keys) in one mapping; a key may appear once (a stage has exactly one kind key)")
        case let .reader(problem, offset, _, _):
            let position = offset.map { lineAndColumn(ofCharacterOffset: $0, in: text) }
                .map { SourcePosition(path: path, line: $0.line, column: $0.column) } ?? .file(path)
            return Diagnostic(code: .yamlSyntax, at: position, "cannot read YAML: \(problem)")
        default:
            return Diagnostic(code: .yamlSyntax, at: .file(path), "cannot parse YAML: \(error)")
        }
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
