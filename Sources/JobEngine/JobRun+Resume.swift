import Foundation
import JobConfig
import JobStore
import JobValues
import Logging
import Promises

/// Where a claimed job starts: its first stage for a fresh job; after a
/// crash, the first stage without a result, with the chain's outcome as the
/// recorded stages left it.
struct ResumePlan {
    var start: Int
    var state: Result<[UInt8]>
    /// The `done` stage's output, if it ran before.
    var doneValue: [UInt8]?
    /// The stage that was running when the last runner died, and the
    /// attempts it had begun.
    var inFlight: (position: Int, attempts: Int)?

    /// Replays the recorded stages: a fulfilled stage that produces a value
    /// sets the chain's value (its recorded value), a rejected one rejects
    /// the chain — with the code it was recorded with, so that a rejection
    /// that ends the job (a cancellation, the job's timeout, an interrupted
    /// stage) still does after a restart, and a `recover` stage only turns a
    /// stage's own failure into a value, as it would have before — and `tap` / `catch` / `ensure` / `finally` leave the outcome
    /// as it was. The first stage without a result is where the job goes on;
    /// a stage already fulfilled never runs again.
    init(claimed: ClaimedJob, definition: JobDefinition) {
        var state: Result<[UInt8]> = .fulfilled(Array(claimed.job.input ?? Data()))
        var doneValue: [UInt8]?
        var start = claimed.stages.count
        var inFlight: (Int, Int)?
        for stored in claimed.stages {
            let kind = definition.stages[stored.position].kind
            switch stored.state {
            case .fulfilled:
                if kind.replacesValue || kind == .get, let value = stored.value {
                    state = .fulfilled(Array(value))
                } else if kind.replacesValue || kind == .get {
                    state = .fulfilled([])
                }
                if kind == .done { doneValue = stored.value.map(Array.init) ?? [] }
            case .rejected:
                if kind.failureRejectsChain {
                    // A rejection stored before the store kept codes reads
                    // back as `resumedRejection` (recoverable).
                    let code = stored.errorCode.flatMap(EngineError.Code.stored) ?? .resumedRejection
                    state = .rejected(
                        EngineError(
                            code, stored.error ?? "stage `\(stored.name)` was rejected",
                            jobID: claimed.job.id, position: stored.position, exitCode: stored.exitCode))
                }
            case .skipped:
                break
            case .pending, .running:
                start = stored.position
                if stored.attempts > 0 { inFlight = (stored.position, stored.attempts) }
            }
            if start != claimed.stages.count { break }
        }
        self.start = start
        self.state = state
        self.doneValue = doneValue
        self.inFlight = inFlight
    }
}

extension JobRun {
    /// Starts the job where it stopped.
    func start() {
        if let mismatch = Self.mismatch(claimed, definition) {
            log(.error, mismatch)
            finish(.rejected(mismatch))
            return
        }
        if let timeout = definition.timeout {
            // started_at is the database's time: so is the deadline.
            let now = context.databaseClock.now()
            armJobTimeout(deadline: (claimed.job.startedAt ?? now) + timeout.timeInterval, now: now, timeout)
        }
        var plan = ResumePlan(claimed: claimed, definition: definition)
        if let value = plan.doneValue { setDoneValue(value) }
        guard let inFlight = plan.inFlight else {
            if plan.start > 0 { log(.info, "resumes at stage \(plan.start)") }
            launch(plan)
            return
        }
        let stage = definition.stages[inFlight.position]
        if case .children = stage.action {
            // The job waited there for its child jobs (or stopped while
            // starting them): the stage joins them again, in the same
            // attempt; the store starts none twice.
            setResumedAttempt(Attempt(position: stage.position, number: max(1, inFlight.attempts), startedAt: nil))
            launch(plan)
            return
        }
        if stage.idempotent {
            log(
                .info,
                "resumes at stage `\(stage.name)`, which was running when the last runner stopped: it runs again (attempt \(inFlight.attempts + 1))",
                position: stage.position)
            setResumedAttempt(Attempt(position: stage.position, number: inFlight.attempts + 1, startedAt: nil))
            launch(plan)
            return
        }
        let error = EngineError(
            .interrupted,
            "interrupted: stage `\(stage.name)` (position \(stage.position), attempt \(inFlight.attempts)) was running when jobd stopped, "
                + "and it is marked `idempotent: false`, so it is not run again",
            jobID: id, position: stage.position)
        log(.warning, error.message, position: stage.position)
        note(Attempt(position: stage.position, number: inFlight.attempts, startedAt: nil))
        setCursor(stage.position + 1)
        record(stage, .rejected(error.message), exitCode: nil, errorCode: error.code).done(on: nil) {
            plan.start = stage.position + 1
            plan.state = .rejected(error)
            self.launch(plan)
        }.catch(on: nil, policy: .allErrors) { _ in
            self.ended()
        }
    }

    /// Why the job's stored stages do not fit its definition, if they do not
    /// (the definition was edited after the job was submitted).
    static func mismatch(_ claimed: ClaimedJob, _ definition: JobDefinition) -> String? {
        let fits =
            claimed.stages.count == definition.stages.count
            && zip(claimed.stages, definition.stages).allSatisfy { $0.name == $1.name && $0.kind == $1.kind.rawValue }
        guard !fits else { return nil }
        let stored = claimed.stages.map { "\($0.kind) \($0.name)" }
        let defined = definition.stages.map { "\($0.kind.rawValue) \($0.name)" }
        return
            "job \(claimed.job.id) was submitted with the stages [\(stored.joined(separator: ", "))], but the definition "
            + "`\(definition.name)` that jobd has loaded has [\(defined.joined(separator: ", "))]: its file changed between "
            + "jobd's last load and the submit, so the job cannot run. Reload jobd (systemctl reload jobd, or SIGHUP) so that "
            + "jobd and jobctl read the same file, then submit the job again (a retry keeps the stages it was submitted with)"
    }
}
