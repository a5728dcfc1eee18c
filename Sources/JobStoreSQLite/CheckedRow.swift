import Foundation
internal import GRDBSQLite
import JobStore

/// A row of a table, read column by column with its SQLite type checked.
///
/// SQLite keeps whatever a row was given: a row written by hand with
/// `sqlite3` may hold text where jobd wrote an integer, a BLOB where it
/// wrote text, NULL in a column it always fills. Every read here checks the
/// storage class (and the range, for counters) and throws a
/// ``JobStoreError/Code/badRow`` naming the table, the row and the column,
/// where a silent conversion would give a wrong value and an unchecked one
/// (GRDB's `row[i]`) would stop the process.
struct CheckedRow {
    let raw: RawRow
    let table: String
    /// Column names by 0-based index.
    let names: [String]
    /// The row's key, as errors show it: `id 42`, `job 42, position 3`.
    private(set) var key: String
    /// The job the row belongs to, once known.
    private(set) var jobID: Int64?

    init(_ raw: RawRow, table: String, names: [String]) {
        self.raw = raw
        self.table = table
        self.names = names
        self.key = "?"
    }

    /// Names the row by its key columns, read as integers when they are
    /// (a key column may itself be the bad one: then its text shows).
    mutating func identify(_ columns: [Int32], jobColumn: Int32? = nil) {
        key = columns.map { column in
            let shown = raw.type(column) == SQLITE_INTEGER ? String(raw.int64(column)) : raw.shown(column, limit: 24)
            return "\(name(column)) \(shown)"
        }.joined(separator: ", ")
        if let jobColumn, raw.type(jobColumn) == SQLITE_INTEGER { jobID = raw.int64(jobColumn) }
    }

    // MARK: Reads

    func text(_ column: Int32) throws -> String? {
        switch raw.type(column) {
        case SQLITE_NULL:
            return nil
        case SQLITE_TEXT:
            guard let text = raw.validText(column) else { throw bad(column, expected: "text") }
            return text
        default:
            throw bad(column, expected: "text")
        }
    }

    func requiredText(_ column: Int32) throws -> String {
        guard let text = try text(column) else { throw bad(column, expected: "text") }
        return text
    }

    func optionalInteger(_ column: Int32, in range: ClosedRange<Int64> = .min ... .max) throws -> Int64? {
        switch raw.type(column) {
        case SQLITE_NULL:
            return nil
        case SQLITE_INTEGER where range.contains(raw.int64(column)):
            return raw.int64(column)
        default:
            throw bad(column, expected: Self.describe(range))
        }
    }

    func integer(_ column: Int32, in range: ClosedRange<Int64> = .min ... .max) throws -> Int64 {
        guard let value = try optionalInteger(column, in: range) else {
            throw bad(column, expected: Self.describe(range))
        }
        return value
    }

    /// A counter (attempts, claims, a position): 0 through `Int32.max`, so
    /// that no `+ 1` on it can overflow.
    func count(_ column: Int32) throws -> Int {
        Int(try integer(column, in: Self.counts))
    }

    static let counts: ClosedRange<Int64> = 0...Int64(Int32.max)

    func bool(_ column: Int32) throws -> Bool {
        try integer(column, in: 0...1) == 1
    }

    /// A timestamp as ``Timestamp`` writes it; NULL is nil.
    func date(_ column: Int32) throws -> Date? {
        guard let text = try text(column) else { return nil }
        guard let date = Timestamp.date(text) else {
            throw bad(column, expected: "a time such as 2026-01-31T09:30:00.000Z")
        }
        return date
    }

    func requiredDate(_ column: Int32) throws -> Date {
        guard let date = try date(column) else {
            throw bad(column, expected: "a time such as 2026-01-31T09:30:00.000Z")
        }
        return date
    }

    /// A value column (no type): any TEXT or BLOB, and a number typed by hand as its text.
    func value(_ column: Int32) -> Data? {
        raw.value(column)
    }

    /// A state column: one of `Value`'s raw values.
    func state<Value: RawRepresentable & CaseIterable>(_ column: Int32, _: Value.Type) throws -> Value
    where Value.RawValue == String {
        if let text = try? text(column), let value = Value(rawValue: text) { return value }
        let known = Value.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        throw bad(column, expected: "one of \(known)")
    }

    // MARK: Errors

    func name(_ column: Int32) -> String {
        Int(column) < names.count ? names[Int(column)] : "#\(column)"
    }

    /// The error for a column that does not hold what is read from it.
    func bad(_ column: Int32, expected: String) -> JobStoreError {
        JobStoreError(
            .badRow,
            "cannot read the \(table) row \(key): its column \(name(column)) holds \(raw.shown(column, limit: 40)) where "
                + "jobd reads \(expected); the row was written by something other than jobd: correct or delete it "
                + "(see \"Rows written by hand\" in docs/schema.md)",
            jobID: jobID)
    }

    private static func describe(_ range: ClosedRange<Int64>) -> String {
        switch range {
        case .min ... .max: "an integer"
        case 0...1: "0 or 1"
        default: "an integer within \(range.lowerBound)…\(range.upperBound)"
        }
    }
}

extension RawRow {
    func type(_ column: Int32) -> Int32 {
        sqlite3_column_type(handle, column)
    }

    /// The column's text if it is valid UTF-8.
    func validText(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(validating: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// What a column holds, for an error message: its storage class and
    /// (the start of) its content. Text is quoted as it is, cut to `limit`
    /// characters; the reader of the message escapes it for a terminal.
    func shown(_ column: Int32, limit: Int) -> String {
        switch type(column) {
        case SQLITE_NULL:
            return "NULL"
        case SQLITE_INTEGER:
            return "the integer \(int64(column))"
        case SQLITE_FLOAT:
            return "the real number \(sqlite3_column_double(handle, column))"
        case SQLITE_TEXT:
            guard let text = validText(column) else {
                return "text that is not valid UTF-8 (X'\(hex(column, limit: limit / 2))')"
            }
            return text.count > limit ? "the text '\(text.prefix(limit))…'" : "the text '\(text)'"
        default:
            let count = Int(sqlite3_column_bytes(handle, column))
            return "a BLOB of \(count) byte\(count == 1 ? "" : "s") (X'\(hex(column, limit: limit / 2))')"
        }
    }

    private func hex(_ column: Int32, limit: Int) -> String {
        let bytes = value(column) ?? Data()
        let shown = bytes.prefix(limit).map { String(format: "%02X", $0) }.joined()
        return bytes.count > limit ? shown + "…" : shown
    }
}
