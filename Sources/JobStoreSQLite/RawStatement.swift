import Foundation
internal import GRDB
internal import GRDBSQLite
import JobStore

/// SQLite's "copy this buffer now" destructor.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// A statement from GRDB's per-connection cache, bound, stepped and read
/// through SQLite's C API.
///
/// The hot paths (stage writes, claims, reading jobs) run tens of thousands
/// of times a second; GRDB's generic argument and row decoding cost more
/// there than SQLite itself. Used only inside a GRDB database access (a
/// transaction on the writer, a read on a reader), so GRDB still owns the
/// connection, its transactions and its statement cache.
struct RawStatement {
    private let statement: Statement
    private let handle: OpaquePointer

    init(_ db: Database, _ sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding (1-based, as in SQL)

    // Every bind is checked: a value past SQLite's length limit
    // (SQLITE_TOOBIG) or a bad index must fail the write, never leave the
    // parameter NULL and store the row without it. Lengths go to SQLite as
    // 64-bit (`*_bind_text64`, `*_bind_blob64`): no conversion can trap.

    func bind(_ index: Int32, _ value: Int64) throws {
        try check(sqlite3_bind_int64(handle, index, value), index)
    }

    func bind(_ index: Int32, _ value: Int) throws {
        try check(sqlite3_bind_int64(handle, index, Int64(value)), index)
    }

    func bind(_ index: Int32, _ value: Int?) throws {
        if let value { try bind(index, value) } else { try bindNull(index) }
    }

    func bindNull(_ index: Int32) throws {
        try check(sqlite3_bind_null(handle, index), index)
    }

    func bind(_ index: Int32, _ text: String?) throws {
        guard var text else { return try bindNull(index) }
        let code = text.withUTF8 { bytes in
            sqlite3_bind_text64(
                handle, index, bytes.baseAddress ?? UnsafePointer(bitPattern: 1), UInt64(bytes.count), transient,
                UInt8(SQLITE_UTF8))
        }
        try check(code, index)
    }

    /// A value, as ``StoredValue`` stores it: TEXT when valid UTF-8 without NUL, BLOB otherwise.
    func bind(_ index: Int32, value data: Data?) throws {
        guard let data else { return try bindNull(index) }
        try check(data.withUnsafeBytes { bindValue(index, $0) }, index)
    }

    /// The same for bytes held in an array (a log line), without making a `Data` of them.
    func bind(_ index: Int32, value bytes: [UInt8]) throws {
        try check(bytes.withUnsafeBytes { bindValue(index, $0) }, index)
    }

    private func bindValue(_ index: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        return StoredValue.isText(bytes)
            ? sqlite3_bind_text64(
                handle, index, base.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), transient,
                UInt8(SQLITE_UTF8))
            : sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), transient)
    }

    private func check(_ code: Int32, _ index: Int32) throws {
        guard code != SQLITE_OK else { return }
        let connection = sqlite3_db_handle(handle)
        let reason =
            code == SQLITE_TOOBIG
            ? "string or blob too big (SQLite's limit is \(sqlite3_limit(connection, SQLITE_LIMIT_LENGTH, -1)) bytes)"
            : String(cString: sqlite3_errstr(code))
        throw DatabaseError(
            resultCode: ResultCode(rawValue: code), message: "cannot bind parameter \(index): \(reason)",
            sql: statement.sql)
    }

    // MARK: Running

    /// Runs the statement to its end.
    func execute() throws {
        defer { sqlite3_reset(handle) }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            case let code: throw error(code)
            }
        }
    }

    /// Decodes every row.
    func rows<T>(_ decode: (RawRow) throws -> T) throws -> [T] {
        defer { sqlite3_reset(handle) }
        var result: [T] = []
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return result
            case SQLITE_ROW: result.append(try decode(RawRow(handle: handle)))
            case let code: throw error(code)
            }
        }
    }

    /// Decodes every row; a row that cannot be read (a
    /// ``JobStoreError/Code/badRow``) is left out and its error added to `unreadable`.
    func rows<T>(_ decode: (RawRow) throws -> T, skipping unreadable: inout [JobStoreError]) throws -> [T] {
        defer { sqlite3_reset(handle) }
        var result: [T] = []
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return result
            case SQLITE_ROW:
                do {
                    result.append(try decode(RawRow(handle: handle)))
                } catch let error as JobStoreError where error.code == .badRow {
                    unreadable.append(error)
                }
            case let code: throw error(code)
            }
        }
    }

    /// Decodes the first row, if any, and runs the statement to its end
    /// (an `UPDATE … RETURNING` does its work as it is stepped).
    func firstRow<T>(_ decode: (RawRow) throws -> T) throws -> T? {
        defer { sqlite3_reset(handle) }
        var first: T?
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return first
            case SQLITE_ROW: if first == nil { first = try decode(RawRow(handle: handle)) }
            case let code: throw error(code)
            }
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        let connection = sqlite3_db_handle(handle)
        let extended = sqlite3_extended_errcode(connection)
        return DatabaseError(
            resultCode: ResultCode(rawValue: extended == 0 ? code : extended),
            message: String(cString: sqlite3_errmsg(connection)),
            sql: statement.sql)
    }
}

/// The current row of a ``RawStatement`` (0-based columns, as in SQLite's C API).
struct RawRow {
    let handle: OpaquePointer

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func int(_ column: Int32) -> Int {
        Int(sqlite3_column_int64(handle, column))
    }

    func optionalInt(_ column: Int32) -> Int? {
        isNull(column) ? nil : int(column)
    }

    func bool(_ column: Int32) -> Bool {
        sqlite3_column_int64(handle, column) != 0
    }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The exact bytes of a TEXT or BLOB column (see ``StoredValue``).
    func value(_ column: Int32) -> Data? {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL:
            return nil
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return Data() }
            return Data(bytes: pointer, count: count)
        default:
            // TEXT, or a number typed by hand in sqlite3: its text.
            guard let pointer = sqlite3_column_text(handle, column) else { return Data() }
            return Data(bytes: pointer, count: Int(sqlite3_column_bytes(handle, column)))
        }
    }

    func date(_ column: Int32) -> Date? {
        text(column).flatMap(Timestamp.date)
    }
}
