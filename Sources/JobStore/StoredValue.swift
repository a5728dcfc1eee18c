import Foundation

/// How a value — the bytes a process printed — is kept, by both stores.
///
/// Valid UTF-8 without NUL bytes is stored as text, so `sqlite3` and `psql`
/// show it as it was printed; anything else is stored as bytes (a BLOB, a
/// `bytea`). Either way the bytes read back are exactly the bytes written.
/// (NUL goes to bytes because SQLite's C string functions, GRDB's text
/// binding and PostgreSQL's `text` stop at or refuse the first NUL.)
package enum StoredValue {
    /// Valid UTF-8 without NUL; checked without allocating.
    package static func isText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Most output is ASCII: a byte loop settles it without decoding.
        if !bytes.contains(where: { $0 == 0 || $0 >= 0x80 }) { return true }
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

    /// What to do about a stage's value, result or error over the cap.
    package static let printLess =
        "Make the stage print less — write big outputs to a file and print its path — "
        + "or raise store.value-cap in jobd.yaml (a restart applies it)."
    /// What to do about a job's input over the cap.
    package static let smallerInput =
        "Give a smaller input — write a big one to a file and pass its path — "
        + "or raise store.value-cap in jobd.yaml (a restart applies it)."

    /// Refuses a value over the cap, before anything is written; `remedy`
    /// says what to do.
    package static func check(
        _ data: Data?, _ what: @autoclosure () -> String, cap: Int, jobID: Int64?, remedy: String = printLess
    ) throws {
        guard let data, data.count > cap else { return }
        throw JobStoreError(
            .valueTooLarge,
            "\(what()) is \(data.count) bytes, over the store's cap of \(cap) bytes; it was not stored "
                + "(values are never cut). " + remedy,
            jobID: jobID)
    }

    package static func check(_ text: String?, _ what: @autoclosure () -> String, cap: Int, jobID: Int64?) throws {
        guard let text, text.utf8.count > cap else { return }
        try check(Data(text.utf8), what(), cap: cap, jobID: jobID)
    }
}
