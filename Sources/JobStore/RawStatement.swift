import Foundation
internal import GRDB
internal import GRDBSQLite

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

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    func bind(_ index: Int32, _ value: Int?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ text: String?) {
        guard var text else {
            sqlite3_bind_null(handle, index)
            return
        }
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(handle, index, bytes.baseAddress ?? UnsafePointer(bitPattern: 1), Int32(bytes.count), transient)
        }
    }

    /// A value, as ``StoredValue`` stores it: TEXT when valid UTF-8 without NUL, BLOB otherwise.
    func bind(_ index: Int32, value data: Data?) {
        guard let data else {
            sqlite3_bind_null(handle, index)
            return
        }
        data.withUnsafeBytes { bytes in
            let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
            if StoredValue.isText(bytes) {
                _ = sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
            } else {
                _ = sqlite3_bind_blob(handle, index, base, Int32(bytes.count), transient)
            }
        }
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
