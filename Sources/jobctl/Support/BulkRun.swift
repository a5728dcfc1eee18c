import Foundation
import JobCalendar
import JobConfig
import JobControl
import JobStore

#if canImport(Glibc)
import Glibc
#endif

/// A `retry`, `cancel` or `delete` over the jobs a filter selects.
///
/// Without `--yes` it prints how many jobs match and changes nothing;
/// `--dry-run` prints their ids. With `--yes` it records an action (the
/// audit trail's `actions` row) and applies it in batches, each committed
/// with the action's progress, so that a run that is interrupted is
/// finished by running the same command again: the store finds the
/// unfinished action by its verb and filter, and goes on above the last job
/// it handled. A job is changed at most once by one action.
struct BulkRun {
    var verb: ActionVerb
    /// The filter as written (`--state rejected`), or `job 42` for one job.
    var filterText: String
    var selection: JobSelection
    var yes: Bool
    var dryRun: Bool
    var batchSize: Int
    var pause: Duration?

    func run(_ session: Session) async throws {
        let config = try session.daemonConfig()
        let outcome = try await session.withStore(config) { store -> Outcome? in
            guard let actions = store as? any JobActionStore else {
                throw JobctlError(
                    .internalError, "this database keeps no audit trail, so jobctl does not act on many jobs")
            }
            return try await run(actions, config: config, session: session)
        }
        guard let outcome else { return }
        if outcome.changed > 0, verb == .retry {
            session.nudge(config, notRunningNote: "jobd is not running: the retried jobs will start when jobd runs")
        }
    }

    struct Outcome: Sendable {
        var changed: Int
    }

    private func run(
        _ store: any JobActionStore, config: DaemonConfiguration, session: Session
    ) async throws -> Outcome? {
        let resumed = try await store.unfinishedAction(verb, filter: filterText)
        let (selection, after) = resumed.map { ($0.selection, $0.lastID) } ?? (self.selection, 0)
        let (count, highest) = try await store.countMatching(
            selection, for: verb, ids: (after + 1)...(resumed?.highestID ?? Int64.max))
        if let resumed {
            session.console.note(
                "resuming action \(resumed.id), started \(RFC3339.string(resumed.startedAt)) by "
                    + "\(resumed.actor.description): \(resumed.changed) of \(resumed.matched) jobs done")
        }
        if dryRun {
            try await printIDs(
                store, selection: selection, after: after, through: resumed?.highestID ?? highest, session)
            return nil
        }
        if !yes {
            let jobs = Session.count(count, "job")
            if session.json {
                session.console.out(
                    JSON.fields([
                        ("verb", .string(verb.rawValue)), ("matched", .int(Int64(count))), ("changed", .int(0)),
                    ]).pretty)
            } else {
                session.console.out(
                    "\(jobs) to \(verb.rawValue)\(count == 0 ? "" : "; add --yes to \(verb.rawValue) \(count == 1 ? "it" : "them") (--dry-run lists them)")\n"
                )
            }
            return nil
        }
        if count == 0 && resumed == nil {
            report(session, action: nil, changed: 0)
            return Outcome(changed: 0)
        }
        var action: ActionRecord
        if let resumed {
            action = resumed
        } else {
            action = try await store.startAction(
                ActionStart(
                    verb: verb, actor: Self.actor(config), filter: filterText, selection: selection, matched: count,
                    highestID: highest))
        }
        let changedBefore = action.changed
        let showProgress = session.console.stderrIsTerminal && !session.json
        while !action.isFinished {
            action = try await store.continueAction(action.id, batchSize: batchSize)
            if showProgress {
                session.console.err("\rjobctl: \(verb.pastTense) \(action.changed) of \(action.matched)")
            }
            if let pause, !action.isFinished { try await Task.sleep(for: pause) }
        }
        if showProgress { session.console.err("\n") }
        report(session, action: action, changed: action.changed - changedBefore)
        return Outcome(changed: action.changed - changedBefore)
    }

    private func report(_ session: Session, action: ActionRecord?, changed: Int) {
        if session.json {
            var members: [(String, JSON)] = [("verb", .string(verb.rawValue))]
            if let action {
                members += [
                    ("action", .int(action.id)), ("matched", .int(Int64(action.matched))),
                    ("changed", .int(Int64(action.changed))),
                ]
            } else {
                members += [("matched", .int(0)), ("changed", .int(0))]
            }
            session.console.out(JSON.fields(members).pretty)
        } else if let action {
            session.console.out("\(verb.pastTense) \(Session.count(changed, "job")) (action \(action.id))\n")
        } else {
            session.console.out("no jobs to \(verb.rawValue)\n")
        }
    }

    private func printIDs(
        _ store: any JobActionStore, selection: JobSelection, after: Int64, through: Int64, _ session: Session
    ) async throws {
        var after = after
        while true {
            let ids = try await store.idsMatching(selection, for: verb, after: after, limit: 1000).filter {
                $0 <= through
            }
            if !ids.isEmpty { session.console.out(ids.map(String.init).joined(separator: "\n") + "\n") }
            guard ids.count == 1000, let last = ids.last else { return }
            after = last
        }
    }

    /// The user running jobctl: name and uid, and the host.
    static func actor(_ config: DaemonConfiguration) -> ActionActor {
        let uid = getuid()
        var name = "uid \(uid)"
        if let entry = getpwuid(uid), let text = entry.pointee.pw_name { name = String(cString: text) }
        return ActionActor(name: name, uid: Int(uid), origin: "jobctl on \(config.node)")
    }

    /// Records an action jobctl did on one job through the store's own
    /// operation. The change is made already: a failure to record it is a
    /// note on stderr, not a failed command.
    static func recordSingle(
        _ verb: ActionVerb, job id: Int64, store: any JobStore, config: DaemonConfiguration, session: Session
    ) async {
        guard let actions = store as? any JobActionStore else { return }
        do {
            _ = try await actions.recordSingleAction(verb, job: id, by: actor(config))
        } catch {
            session.console.note("job \(id) was \(verb.pastTense), but the audit trail did not record it: \(error)")
        }
    }
}
