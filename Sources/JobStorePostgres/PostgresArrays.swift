import Foundation
import JobStore
internal import NIOCore
internal import PostgresNIO

/// A one-dimensional array parameter whose elements may be NULL, for
/// `unnest($1::text[], …)`: postgres-nio encodes arrays without NULLs only.
/// The binary array format: dimensions, has-nulls flag, element type, then
/// per dimension its length and lower bound, then each element as a length
/// (-1 for NULL) and its bytes.
struct PostgresArray<Element: PostgresArrayEncodable>: PostgresEncodable, PostgresThrowingDynamicTypeEncodable {
    var elements: [Element?]

    init(_ elements: [Element?]) {
        self.elements = elements
    }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) throws {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            try element.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex)
        }
    }
}

extension PostgresArray where Element == ByteBuffer {
    /// Bytes as `bytea[]`.
    static func bytes(_ values: [Data?]) -> PostgresArray<ByteBuffer> {
        PostgresArray(values.map { $0.map { ByteBuffer(bytes: $0) } })
    }
}
