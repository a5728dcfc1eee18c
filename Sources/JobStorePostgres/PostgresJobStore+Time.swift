import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    /// The server's `clock_timestamp()`, read in one statement timed on
    /// the monotonic clock: the time is placed at the middle of the round
    /// trip (connecting is not counted).
    public func databaseTime() async throws -> DatabaseTime {
        try await read(doing: "read the server's clock") { session in
            let sent = ContinuousClock.now
            let rows = try await session.rows("SELECT clock_timestamp()") { row in try PostgresIndexedRow(row).date(0) }
            let answered = ContinuousClock.now
            guard let time = rows.first ?? nil else {
                throw JobStoreError(.database, "the server did not say what time it is")
            }
            let trip = answered - sent
            return DatabaseTime(time: time, at: sent + trip / 2, roundTrip: trip)
        }
    }
}
