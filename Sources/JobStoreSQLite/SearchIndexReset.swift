internal import GRDB

/// Keeps the writer's statements from paying for one large value indexed
/// long ago.
///
/// `jobs_search` is an FTS5 table kept by triggers on `jobs`. FTS5 gathers
/// the terms of the rows a statement changes in a hash table, and writes
/// them out at the end of every statement that changed it inside a
/// transaction (the statement's savepoint); writing them out walks and
/// clears the whole table. The table grows (by doubling, from 1,024 slots)
/// to hold the most distinct terms ever pending at once, and never
/// shrinks while the connection keeps the FTS5 table open. So once a value
/// with many distinct terms went through the index — a parent's input of
/// one line per child, its result of one element per child, any large
/// input — every later job's insert or end on that connection paid in
/// proportion to that value: with 10,000 distinct terms, a table of 32,768
/// slots walked and zeroed per statement.
///
/// After a transaction that indexed a value of ``bytes`` or more, the
/// writer resets its connection's schema (`PRAGMA writable_schema =
/// RESET`, which changes nothing in the file): SQLite closes its virtual
/// tables and opens them afresh on next use, with a new, small hash table.
/// The statements it had prepared are prepared again on their next use.
enum SearchIndexReset {
    /// A value this long may hold enough distinct terms (more than 512: two
    /// bytes each at the least) to double the hash table.
    static let bytes = 4096

    /// Whether one of `lengths` is ``bytes`` or more.
    static func isLarge(_ lengths: some Sequence<Int>) -> Bool {
        lengths.contains { $0 >= bytes }
    }

    /// Resets the connection's schema (outside a transaction); whether it did.
    static func run(_ db: Database) -> Bool {
        guard !db.isInsideTransaction else { return false }
        do {
            try db.execute(sql: "PRAGMA writable_schema = RESET")
            return true
        } catch {
            return false
        }
    }
}
