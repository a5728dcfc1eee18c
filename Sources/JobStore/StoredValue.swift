import Foundation
internal import GRDB

/// How a value — the bytes a process printed — is kept in SQLite.
///
/// Valid UTF-8 without NUL bytes is stored as TEXT, so `sqlite3` shows it
/// as it was printed; anything else is stored as a BLOB. Either way the
/// bytes read back are exactly the bytes written. (NUL goes to a BLOB
/// because SQLite's C string functions, and GRDB's text binding, stop at
/// the first NUL.)
enum StoredValue {
    static func databaseValue(_ data: Data?) -> DatabaseValue {
        guard let data else { return .null }
        if data.withUnsafeBytes(isText), let text = String(validating: data, as: UTF8.self) {
            return text.databaseValue
        }
        return data.databaseValue
    }

    /// Valid UTF-8 without NUL; checked without allocating.
    static func isText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar):
                if scalar.count == 1 && scalar.first == 0 { return false }
            case .emptyInput:
                return true
            case .error:
                return false
            }
        }
    }

    static func data(_ value: DatabaseValue) -> Data? {
        switch value.storage {
        case .null: return nil
        case .string(let text): return Data(text.utf8)
        case .blob(let data): return data
        // Written by hand with sqlite3 as a number: keep what SQLite would print.
        case .int64(let number): return Data(String(number).utf8)
        case .double(let number): return Data(String(number).utf8)
        }
    }

    /// What to do about a stage's value, result or error over the cap.
    static let printLess = "Make the stage print less — write big outputs to a file and print its path — "
        + "or raise store.value-cap in jobd.yaml (a restart applies it)."
    /// What to do about a job's input over the cap.
    static let smallerInput = "Give a smaller input — write a big one to a file and pass its path — "
        + "or raise store.value-cap in jobd.yaml (a restart applies it)."

    /// Refuses a value over the cap, before anything is written; `remedy`
    /// says what to do.
    static func check(
        _ data: Data?, _ what: @autoclosure () -> String, cap: Int, jobID: Int64?, remedy: String = printLess
    ) throws {
        guard let data, data.count > cap else { return }
        throw JobStoreError(
            .valueTooLarge,
            "\(what()) is \(data.count) bytes, over the store's cap of \(cap) bytes; it was not stored "
                + "(values are never cut). " + remedy,
            jobID: jobID)
    }

    static func check(_ text: String?, _ what: @autoclosure () -> String, cap: Int, jobID: Int64?) throws {
        guard let text, text.utf8.count > cap else { return }
        try check(Data(text.utf8), what(), cap: cap, jobID: jobID)
    }
}
