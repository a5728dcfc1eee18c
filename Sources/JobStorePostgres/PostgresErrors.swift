import Foundation
import JobStore
import JobValues
internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import PostgresNIO

extension JobStoreError {
    /// Turns what postgres-nio (or the network) threw into a one-line
    /// ``JobStoreError`` that says what failed and what to do. `target`
    /// names the database without its password; `creating`: the call
    /// creates or upgrades the schema (a missing privilege is then CREATE,
    /// not one on a table).
    package static func wrapPostgres(
        _ error: any Error, target: PostgresTarget, doing what: String, creating: Bool = false
    ) -> JobStoreError {
        if let error = error as? JobStoreError { return error }
        if let error = error as? PSQLError { return wrap(error, target: target, doing: what, creating: creating) }
        if error is CancellationError {
            return JobStoreError(.closed, "could not \(what) in \(target): the store was stopped", underlying: error)
        }
        if let tls = tlsFailure(error, target: target, doing: what) { return tls }
        // Connecting (refused, unreachable, name not found, timed out), or
        // the pool's circuit breaker after a minute without a connection.
        return unavailable(target, what, connectionDetail(error), underlying: error)
    }

    private static func wrap(
        _ error: PSQLError, target: PostgresTarget, doing what: String, creating: Bool
    ) -> JobStoreError {
        switch error.code {
        case .server:
            return server(error, target: target, doing: what, creating: creating)
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
            return JobStoreError(
                .cannotOpen,
                "could not \(what): TLS to \(target) failed: \(error.underlying.map { "\($0)" } ?? "\(error.code)")",
                underlying: error)
        // clientClosedConnection: PostgresNIO closed a connection that
        // failed, with queries still queued on it (the store's own close
        // refuses writes before they reach a connection).
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .queryCancelled:
            if let underlying = error.underlying, let tls = tlsFailure(underlying, target: target, doing: what) {
                return tls
            }
            let detail = error.underlying.map(connectionDetail) ?? "the connection failed (\(error.code))"
            return unavailable(target, what, detail, underlying: error)
        default:
            return JobStoreError(.database, "could not \(what) in \(target): \(error.code)", underlying: error)
        }
    }

    /// An error the server sent, by SQLSTATE.
    private static func server(
        _ error: PSQLError, target: PostgresTarget, doing what: String, creating: Bool
    ) -> JobStoreError {
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
                "could not \(what): there is no database \(target.database) on the server at \(target.place)\(detail). "
                    + "Create it (createdb -O \(target.user) \(target.database)), or fix the URL",
                underlying: error)
        case "42501" where creating:
            return JobStoreError(
                .permissionDenied,
                "could not \(what) in \(target): permission denied\(detail). The user needs CREATE on the "
                    + "database (or an existing schema it owns) to create or upgrade the schema \(target.schema); "
                    + "jobd --check says which GRANT (docs/operations.md)",
                underlying: error)
        case "42501":
            let schema = target.schema
            let user = target.user
            return JobStoreError(
                .permissionDenied,
                "could not \(what) in \(target): permission denied\(detail). User \(user) must read and write every "
                    + "table of schema \(schema): GRANT USAGE ON SCHEMA \(schema) TO \(user); GRANT SELECT, INSERT, "
                    + "UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(user); GRANT USAGE ON ALL SEQUENCES IN "
                    + "SCHEMA \(schema) TO \(user) (jobd --check lists what it lacks)",
                underlying: error)
        case "55P03":
            return JobStoreError(
                .busy,
                "could not \(what) in \(target): another session holds a lock it needs\(detail) (a psql session left "
                    + "in a transaction? pg_locks and pg_stat_activity show who); try again",
                underlying: error)
        case "57014":
            return JobStoreError(
                .busy,
                "could not \(what) in \(target): the statement ran out of time\(detail) (another session's lock, or "
                    + "a server that is overloaded); try again",
                underlying: error)
        case let code
        where code.hasPrefix("08") || code.hasPrefix("57P") || code == "53300" || code == "55000"
            || code == "25P03":
            return unavailable(target, what, "the server is not available\(detail)", underlying: error)
        case "40001", "40P01":
            return JobStoreError(
                .busy, "could not \(what) in \(target): a conflict with another transaction\(detail); try again",
                underlying: error)
        case "53100":
            return JobStoreError(
                .diskFull, "could not \(what) in \(target): the server's disk is full\(detail)", underlying: error)
        default:
            return JobStoreError(.database, "could not \(what) in \(target)\(detail)", underlying: error)
        }
    }

    /// A TLS handshake that failed: the server's certificate was refused
    /// (`sslmode=verify-full`), or TLS itself failed. Not retryable: the
    /// same certificate is refused the next time.
    private static func tlsFailure(_ error: any Error, target: PostgresTarget, doing what: String) -> JobStoreError? {
        switch error {
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return JobStoreError(
                .cannotOpen,
                "could not \(what): the TLS certificate of \(target) does not name that host (sslmode=verify-full checks "
                    + "the host name of the URL against it): connect by a name the certificate holds, or fix the certificate",
                underlying: error)
        case let error as NIOSSLError:
            let reason =
                "\(error)".contains("CERTIFICATE_VERIFY_FAILED")
                ? "its certificate is not signed by a trusted CA (sslmode=verify-full checks it against the system's "
                    + "CA roots, or the file sslrootcert= names: give the server's CA there)"
                : "\(error)"
            return JobStoreError(
                .cannotOpen, "could not \(what): TLS to \(target) failed: \(reason)", underlying: error)
        default:
            return nil
        }
    }

    /// What failed while connecting, in words, without the nested type
    /// names of NIO's errors.
    static func connectionDetail(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            let text = String(cString: strerror(error.errnoCode))
            return "the connection failed: \(text.prefix(1).lowercased() + text.dropFirst())"
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first { return connectionDetail(failure.error) }
            if let dns = error.dnsAError ?? error.dnsAAAAError {
                return "the host name \(error.host) could not be resolved: \(dns)"
            }
            return "the host name \(error.host) has no address"
        case ChannelError.connectTimeout(let timeout):
            return "no connection within \(Duration.nanoseconds(timeout.nanoseconds))"
        case let error as PSQLError:
            return error.underlying.map(connectionDetail) ?? "the connection failed (\(error.code))"
        default:
            return "the connection failed: \(error)"
        }
    }

    static func unavailable(
        _ target: PostgresTarget, _ what: String, _ why: String, underlying: (any Error)? = nil
    ) -> JobStoreError {
        JobStoreError(
            .unavailable,
            "could not \(what): \(target) is unavailable: \(why). Check that the server runs and can be reached",
            underlying: underlying)
    }

    /// A statement left unanswered past `bound`: its connection was closed.
    static func silent(_ target: PostgresTarget, _ what: String, _ bound: Duration) -> JobStoreError {
        JobStoreError(
            .unavailable,
            "could not \(what): \(target) sent no answer for \(bound.components.seconds) s, though the connection stayed "
                + "open (a network path, NAT or proxy that stopped passing data?); that connection was closed and a "
                + "new one is made")
    }

    /// Whether the server rejected a statement (the transaction is aborted,
    /// the connection is fine), rather than the connection failing.
    static func isStatementError(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        return !PostgresSession.connectionFailed(error)
    }
}
