/// jobctl's exit statuses. Beyond 0 and 1 they follow BSD's sysexits.h, so
/// a script can tell a typo from a missing job from a stopped daemon.
///
/// | status | name | when |
/// |---|---|---|
/// | 0 | ok | done; for `wait` and `submit --wait`: the job was fulfilled |
/// | 1 | notFulfilled | `wait`, `submit --wait`: the job ended rejected or cancelled |
/// | 64 | usage | a bad command line: unknown flag, bad duration, non-numeric id, … |
/// | 65 | dataError | refused data: input over the value cap, a retry of a job that has not ended, `validate` found errors; a database row jobctl cannot read |
/// | 66 | noInput | an input or batch file cannot be read |
/// | 67 | unknown | no such job, no such definition |
/// | 69 | unavailable | `daemon`, `metrics`: jobd is not running |
/// | 70 | software | a bug in jobctl |
/// | 74 | ioError | the database cannot be opened or read: missing folder, damaged file, disk full, I/O error |
/// | 75 | tempFail | `wait --timeout` ran out; the database stayed locked past the busy timeout; the PostgreSQL server cannot be reached |
/// | 77 | noPermission | this user may not write the database (file permissions; PostgreSQL's login or grants), or connect to jobd's socket |
/// | 78 | config | no jobd.yaml found, or it (or the definition a command needs) has errors |
struct ExitStatus: Hashable, Sendable, CustomStringConvertible {
    let code: Int32
    let name: String

    private init(_ code: Int32, _ name: String) {
        self.code = code
        self.name = name
    }

    static let ok = ExitStatus(0, "ok")
    static let notFulfilled = ExitStatus(1, "not-fulfilled")
    static let usage = ExitStatus(64, "usage")
    static let dataError = ExitStatus(65, "data-error")
    static let noInput = ExitStatus(66, "no-input")
    static let unknown = ExitStatus(67, "unknown")
    static let unavailable = ExitStatus(69, "unavailable")
    static let software = ExitStatus(70, "software")
    static let ioError = ExitStatus(74, "io-error")
    static let tempFail = ExitStatus(75, "temp-fail")
    static let noPermission = ExitStatus(77, "no-permission")
    static let config = ExitStatus(78, "config")

    /// Every status, in numeric order (for the help text and the docs).
    static let all: [ExitStatus] = [
        .ok, .notFulfilled, .usage, .dataError, .noInput, .unknown, .unavailable, .software, .ioError,
        .tempFail, .noPermission, .config,
    ]

    var description: String { "\(code) (\(name))" }

    /// What the status means, one line each, for `jobctl --help`.
    var meaning: String {
        switch code {
        case 0: "done (wait, submit --wait: the job was fulfilled)"
        case 1: "wait, submit --wait: the job was rejected or cancelled"
        case 64: "bad command line: flag, duration, id, limit"
        case 65: "refused: input over the cap, retry of a live job, validate errors; a bad database row"
        case 66: "an input or batch file cannot be read"
        case 67: "no such job or definition"
        case 69: "daemon, metrics: jobd is not running"
        case 70: "internal error"
        case 74: "the database cannot be opened or read"
        case 75: "wait --timeout ran out, the database stayed locked, or its server is unreachable"
        case 77: "permission denied: the database (file, login, grants), or jobd's socket"
        case 78: "no jobd.yaml, or it or a needed definition has errors"
        default: name
        }
    }

    /// The table printed at the end of `jobctl --help`.
    static var helpTable: String {
        "Exit status:\n"
            + all.map { status in
                let code = String(status.code)
                return "  " + code + String(repeating: " ", count: 4 - code.count) + status.meaning
            }.joined(separator: "\n")
    }
}
