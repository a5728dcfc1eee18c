import Foundation

/// Finding jobs by what they hold: the words of their input, result, error
/// and idempotency key (SQLite: an FTS5 index; PostgreSQL: a full-text
/// index; see docs/schema.md).
///
/// The text a user types is a list of words; a job matches when its
/// values hold every one of them (in any order, as whole words, case
/// ignored). It reaches SQL only as a bound parameter, and no character of
/// it is an operator.
public protocol JobSearchStore: Sendable {
    /// A page of the jobs that hold every word of `text` and match `query`'s
    /// states and definition, newest first (`query.before` pages on).
    func search(_ text: String, _ query: JobQuery) async throws -> JobPage
}

public enum SearchText {
    /// The words of `text`: split at anything that is not a letter or a digit, at most 16.
    public static func words(_ text: String) -> [String] {
        let words = text.split { !$0.isLetter && !$0.isNumber }.map { String($0).lowercased() }
        return Array(words.prefix(16))
    }

    /// `text` as an FTS5 query: each word quoted (so that no character is an operator), all required.
    package static func fts5Query(_ text: String) -> String {
        words(text).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " ")
    }
}
