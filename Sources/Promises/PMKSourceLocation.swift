import Locking
import Synchronization

/// Where a promise or guarantee was made: `#fileID` and `#line`.
public struct PMKSourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The `#fileID` of the call site, such as `MyModule/Fetch.swift`.
    public let file: String
    public let line: UInt

    public init(file: String, line: UInt) {
        self.file = file
        self.line = line
    }

    /// A location that says nothing.
    public static let unknown = PMKSourceLocation(file: "<unknown>", line: 0)

    public var description: String {
        "\(file):\(line)"
    }
}

/// Interns call sites as 14-bit ids.
///
/// A pending box keeps the id of the call site that made it in two bytes
/// that would otherwise be padding, so leak reports can say where a promise
/// was made at no cost in memory: a pending promise with its resolver and
/// one handler stays within 150 bytes. Call sites are few (one per
/// `pending()` / `Promise { … }` / `Guarantee { … }` in the source), so the
/// table stays small; past 16,383 distinct sites new ones read as unknown.
@usableFromInline
enum LocationTable {
    struct Key: Hashable {
        let address: UInt
        let line: UInt
    }

    struct Table {
        var ids: [Key: UInt32] = [:]
        var locations: [PMKSourceLocation] = [.unknown]
    }

    static let table = Mutex(Table())

    /// Names `table`'s lock to ThreadSanitizer.
    final class Token: Sendable {}
    static let token = Token()
    static var address: UnsafeMutableRawPointer { Unmanaged.passUnretained(token).toOpaque() }

    /// The id of `file:line`; 0 when it cannot be had.
    @usableFromInline
    static func id(file: StaticString, line: UInt) -> UInt32 {
        guard file.hasPointerRepresentation else { return 0 }
        let key = Key(address: UInt(bitPattern: file.utf8Start), line: line)
        return table.withLock(announcing: address) { table in
            if let id = table.ids[key] { return id }
            guard table.locations.count <= 0x3FFF else { return 0 }
            let id = UInt32(table.locations.count)
            table.locations.append(PMKSourceLocation(file: file.description, line: line))
            table.ids[key] = id
            return id
        }
    }

    static func location(of id: UInt32) -> PMKSourceLocation {
        table.withLock(announcing: address) { table in
            Int(id) < table.locations.count ? table.locations[Int(id)] : .unknown
        }
    }
}
