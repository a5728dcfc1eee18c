import Foundation
internal import NIOCore
internal import PostgresNIO

extension JobStoreError {
    /// Turns what postgres-nio (or the network) threw into a one-line
    /// ``JobStoreError`` that says what failed and what to do. `target`
    /// names the database without its password.
    static func wrapPostgres(_ error: any Error, target: String, doing what: String) -> JobStoreError {
        if let error = error as? JobStoreError { return error }
        if let error = error as? PSQLError { return wrap(error, target: target, doing: what) }
        if error is CancellationError {
            return JobStoreError(.closed, "could not \(what) in \(target): the store was stopped", underlying: error)
        }
        // Connecting (refused, unreachable, name not found, timed out), or
        // the pool's circuit breaker after a minute without a connection.
        return unavailable(target, what, "\(error)", underlying: error)
    }

    private static func wrap(_ error: PSQLError, target: String, doing what: String) -> JobStoreError {
        switch error.code {
        case .server:
            return server(error, target: target, doing: what)
        case .poolClosed:
            return JobStoreError(.closed, "could not \(what) in \(target): the store was closed", underlying: error)
        case .authMechanismRequiresPassword:
            return JobStoreError(
                .permissionDenied,
                "could not \(what): \(target) asks for a password and none was given: put it in the URL, "
                    + "$PGPASSWORD, or the systemd credential db-password",
                underlying: error)
        case .sslUnsupported:
            return JobStoreError(
                .cannotOpen,
                "could not \(what): \(target) does not offer TLS, which sslmode asks for: enable ssl on the "
                    + "server, or use sslmode=prefer or disable",
                underlying: error)
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return JobStoreError(.cannotOpen, "could not \(what): TLS to \(target) failed: \(error.underlying.map { "\($0)" } ?? "\(error.code)")", underlying: error)
        // clientClosedConnection: PostgresNIO closed a connection that
        // failed, with queries still queued on it (the store's own close
        // refuses writes before they reach a connection).
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .queryCancelled:
            let detail = error.underlying.map { "\($0)" } ?? "\(error.code)"
            return unavailable(target, what, "the connection failed (\(detail))", underlying: error)
        default:
            return JobStoreError(.database, "could not \(what) in \(target): \(error.code)", underlying: error)
        }
    }

    /// An error the server sent, by SQLSTATE.
    private static func server(_ error: PSQLError, target: String, doing what: String) -> JobStoreError {
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? "server error"
        let detail = " (PostgreSQL \(state): \(message))"
        switch state {
        case "28P01", "28000":
            return JobStoreError(
                .permissionDenied,
                "could not \(what): \(target) refused the login\(detail). Check the user and the password "
                    + "(URL, $PGPASSWORD or the db-password credential) and pg_hba.conf",
                underlying: error)
        case "3D000":
            return JobStoreError(
                .cannotOpen,
                "could not \(what): the database of \(target) does not exist\(detail). Create it "
                    + "(createdb -O USER DATABASE), or fix the URL",
                underlying: error)
        case "42501":
            return JobStoreError(
                .permissionDenied,
                "could not \(what) in \(target): permission denied\(detail). The user needs CREATE on the "
                    + "database (or an existing schema it owns) — see docs/operations.md",
                underlying: error)
        case let code where code.hasPrefix("08") || code.hasPrefix("57P") || code == "53300" || code == "55000":
            return unavailable(target, what, "the server is not available\(detail)", underlying: error)
        case "40001", "40P01", "55P03":
            return JobStoreError(
                .busy, "could not \(what) in \(target): a conflict with another transaction\(detail); try again",
                underlying: error)
        case "53100":
            return JobStoreError(.diskFull, "could not \(what) in \(target): the server's disk is full\(detail)", underlying: error)
        default:
            return JobStoreError(.database, "could not \(what) in \(target)\(detail)", underlying: error)
        }
    }

    static func unavailable(_ target: String, _ what: String, _ why: String, underlying: (any Error)? = nil) -> JobStoreError {
        JobStoreError(
            .unavailable,
            "could not \(what): \(target) is unavailable: \(why). jobd retries by itself; check that the "
                + "server runs and can be reached",
            underlying: underlying)
    }

    /// Whether the server rejected a statement (the transaction is aborted,
    /// the connection is fine), rather than the connection failing.
    static func isStatementError(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        return !PGSession.connectionFailed(error)
    }
}
