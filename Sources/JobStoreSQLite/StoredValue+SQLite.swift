import Foundation
package import GRDB
import JobStore

/// A value as a SQLite column: TEXT or a BLOB, as ``StoredValue`` says.
extension StoredValue {
    static func databaseValue(_ data: Data?) -> DatabaseValue {
        guard let data else { return .null }
        if data.withUnsafeBytes(isText), let text = String(validating: data, as: UTF8.self) {
            return text.databaseValue
        }
        return data.databaseValue
    }

    package static func data(_ value: DatabaseValue) -> Data? {
        switch value.storage {
        case .null: return nil
        case .string(let text): return Data(text.utf8)
        case .blob(let data): return data
        // Written by hand with sqlite3 as a number: keep what SQLite would print.
        case .int64(let number): return Data(String(number).utf8)
        case .double(let number): return Data(String(number).utf8)
        }
    }
}
