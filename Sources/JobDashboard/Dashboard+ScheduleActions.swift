import Foundation
import JobStore

/// The schedules page's forms: "run now", pause and resume, each in the
/// audit trail as `jobctl schedules run`, `pause schedule` and `resume
/// schedule` are.
extension Dashboard {
    /// `POST /schedules` with `verb` (run, pause, resume), `definition`,
    /// and for a pause an optional `reason`.
    public func act(
        onSchedule form: [(String, String)], name: String, uid: Int?, origin: String
    ) async -> ActionOutcome {
        guard let actions else { return .refused(status: 404, message: "This dashboard changes nothing.") }
        let field = { (key: String) in form.first(where: { $0.0 == key })?.1 }
        guard let verb = field("verb").flatMap(OperatorVerb.init(rawValue:)), verb != .backfill else {
            return .refused(status: 400, message: "verb must be run, pause or resume")
        }
        guard let definition = field("definition"), !definition.isEmpty else {
            return .refused(status: 400, message: "the form names no definition")
        }
        let actor = ActionActor(name: name, uid: uid, origin: origin)
        do {
            let summary = try await actions.act(
                onSchedule: definition, verb, reason: field("reason"), by: actor)
            guard let summary else {
                return .refused(
                    status: 404, message: "This jobd runs no definition \(definition) with a schedule.")
            }
            return .done(location: "schedules", summary: summary)
        } catch {
            return .refused(status: 503, message: "The job store could not be written: \(error)")
        }
    }
}

extension DashboardActions {
    /// Runs, pauses or resumes `definition`'s schedules; gives what was done
    /// (for the log), or nil when jobd has no such schedule.
    func act(
        onSchedule definition: String, _ verb: OperatorVerb, reason: String?, by actor: ActionActor
    ) async throws -> String? {
        guard var job = scheduleJob(definition), let runs = jobs as? any JobScheduleRunStore else { return nil }
        switch verb {
        case .run:
            job.scheduledFor = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
            let run = try await runs.runSchedule(job, by: actor)
            return "ran schedule of \(definition) now: job \(run.job) (action \(run.action))"
        case .pause:
            let why = reason.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
            let action = try await pause(
                Pause(scope: .schedule, name: definition, reason: why, actor: actor.description), by: actor
            ).action
            return "paused schedule of \(definition)" + (action.map { " (action \($0))" } ?? "")
        case .resume:
            let (resumed, action) = try await resume(.schedule, name: definition, by: actor)
            guard resumed else { return "schedule of \(definition) was not paused" }
            return "resumed schedule of \(definition)" + (action.map { " (action \($0))" } ?? "")
        case .backfill:
            return nil
        }
    }
}
