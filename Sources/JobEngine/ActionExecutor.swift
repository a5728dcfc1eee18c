import Dispatch
import Foundation
import JobConfig
import JobMetrics
import JobProcesses
import JobValues
import Locking
import Promises
import Synchronization

/// What an action produced: its bytes, and its exit status if it was a process.
struct ActionOutput: Sendable {
    var bytes: [UInt8]
    var exitCode: Int32?
}

/// What an action needs to know besides its input.
struct ActionContext: Sendable {
    var jobID: Int64
    var stage: StageDefinition
    var attempt: Int
    var control: AttemptControl
    /// Where the stderr lines of the attempt's processes go, if anywhere.
    var log: StageLog?
}

/// A test's stand-in for a stage's action (see `Engine.init`'s `customAction`).
public typealias CustomAction =
    @Sendable (_ jobID: Int64, _ stage: StageDefinition, _ input: [UInt8]) -> Promise<[UInt8]>?

/// Runs actions: each returns a promise at once and resolves it later, from
/// a process completion or a timer. Nothing here waits on a thread.
struct ActionExecutor: Sendable {
    let runner: ProcessRunner
    /// Where `sleep` actions' timers run.
    let deadlines: TimerHeap
    /// The daemon's environment, read once (every child starts from it).
    let baseEnvironment: [String: String]
    var killGrace: Duration
    /// Stdout past this many bytes rejects a process (the store's value cap).
    var outputLimit: Int
    let customAction: CustomAction?
    let metrics: JobMetrics

    func run(_ action: Action, input: [UInt8], _ context: ActionContext) -> Promise<ActionOutput> {
        if let custom = customAction?(context.jobID, context.stage, input) {
            return custom.map(on: nil) { ActionOutput(bytes: $0, exitCode: nil) }
        }
        switch action {
        case let .run(argv):
            return runProcess(.argv(argv), input: input, context)
        case let .shell(script):
            return runProcess(.shell(script), input: input, context)
        case let .sleep(duration):
            return sleep(duration, passing: input, context)
        case let .fail(message):
            return Promise(error: EngineError(.stageFailed, message))
        case let .transform(transform):
            do {
                return .value(ActionOutput(bytes: try transform.apply(input), exitCode: nil))
            } catch {
                return Promise(error: EngineError(.stageFailed, "transform \(transform) failed: \(error.message)"))
            }
        case let .all(actions):
            return all(actions, input: input, context)
        case let .any(actions):
            return any(actions, input: input, context)
        case .children:
            // Children are started and joined by the job's run, through the store.
            return Promise(
                error: EngineError(.badDefinition, "child jobs are started by the job's run, not as an action"))
        }
    }

    // MARK: Processes

    private func runProcess(
        _ command: ProcessSpec.Command, input: [UInt8], _ context: ActionContext
    ) -> Promise<ActionOutput> {
        let stage = context.stage
        let spec = ProcessSpec(
            command, input: input,
            environment: ProcessEnvironment.forStage(
                base: baseEnvironment, jobID: context.jobID, stage: stage.name, attempt: context.attempt,
                stageEnvironment: stage.env),
            workingDirectory: stage.cwd, killGrace: killGrace, outputLimit: outputLimit, stderrLines: context.log,
            // Stdout that does not become the chain's value is kept as log lines.
            stdoutLines: stage.kind.replacesValue ? nil : context.log?.stdout)
        let (promise, resolver) = Promise<ActionOutput>.pending()
        let control = context.control
        let metrics = self.metrics
        let log = context.log
        log?.processStarted()
        let process = runner.run(spec) { result in
            // Before the result: when the stage settles, its log closes at once if no process of it runs.
            log?.processEnded()
            if case let .failure(error) = result, error.isFailureToStart { metrics.processFailedToStart() }
            switch result {
            case let .success(outcome):
                resolver.fulfill(ActionOutput(bytes: outcome.output, exitCode: 0))
            case let .failure(error):
                resolver.reject(Self.describe(error, stage: stage, stoppedBecause: control.reason))
            }
        }
        // Counted when it starts, not when it ends: a process that runs
        // for an hour is in the count from its first second.
        if process.processID != nil { metrics.processStarted() }
        control.onStop { [killGrace] reason in
            if case let .job(error) = reason, let grace = error.stopGrace {
                process.terminate(grace: min(grace, killGrace))
            } else {
                process.cancel()
            }
        }
        return promise
    }

    /// A process error as the stage's error.
    static func describe(
        _ error: ProcessError, stage: StageDefinition, stoppedBecause reason: StopReason?
    ) -> EngineError {
        var exitCode: Int32?
        if case let .exited(status)? = error.termination { exitCode = status }
        guard error.code == .cancelled, let reason else {
            return EngineError(.stageFailed, error.description, exitCode: exitCode)
        }
        let signals = error.killed ? "SIGTERM, then SIGKILL" : "SIGTERM"
        switch reason {
        case .stageTimeout:
            let limit = stage.timeout.map { " of \($0.jobdText)" } ?? ""
            return EngineError(
                .stageTimedOut,
                "`\(error.command)` ran past the stage's timeout\(limit); its process group got \(signals)",
                exitCode: exitCode)
        case .settled:
            return EngineError(
                .stageFailed, "`\(error.command)` was stopped: the stage was already settled", exitCode: exitCode)
        case var .job(jobError):
            jobError.message += " (`\(error.command)` was stopped: its process group got \(signals))"
            jobError.exitCode = exitCode
            return jobError
        }
    }

    // MARK: Timers

    private func sleep(_ duration: Duration, passing input: [UInt8], _ context: ActionContext) -> Promise<ActionOutput>
    {
        let (promise, resolver) = Promise<ActionOutput>.pending()
        let stage = context.stage
        let timer = OneShotTimer.schedule(on: deadlines, after: duration.dispatchInterval) {
            resolver.fulfill(ActionOutput(bytes: input, exitCode: nil))
        }
        context.control.onStop { reason in
            timer.cancel()
            resolver.reject(Self.stopped("sleep \(duration.jobdText)", stage: stage, reason))
        }
        return promise
    }

    /// The error of an action that had nothing to kill (a timer).
    static func stopped(_ what: String, stage: StageDefinition, _ reason: StopReason) -> EngineError {
        switch reason {
        case .stageTimeout:
            let limit = stage.timeout.map { " of \($0.jobdText)" } ?? ""
            return EngineError(.stageTimedOut, "`\(what)` ran past the stage's timeout\(limit)")
        case .settled:
            return EngineError(.stageFailed, "`\(what)` was stopped: the stage was already settled")
        case var .job(jobError):
            jobError.message += " (during `\(what)`)"
            return jobError
        }
    }

    // MARK: when / race

    /// All in parallel; the value is a JSON array of their outputs as
    /// strings. The first failure rejects at once and stops the others.
    private func all(_ actions: [Action], input: [UInt8], _ context: ActionContext) -> Promise<ActionOutput> {
        let group = AttemptControl()
        context.control.onStop { group.stop($0) }
        var inner = context
        inner.control = group
        let runs = actions.enumerated().map { index, action in
            run(action, input: input, inner).recover(on: nil) { error -> Promise<ActionOutput> in
                throw Self.labelled(error, "all[\(index)] (\(action.keyword))")
            }
        }
        return when(fulfilled: runs).map(on: nil) { outputs in
            group.finish()
            let strings = outputs.map { JSONValue.string(String(decoding: $0.bytes, as: UTF8.self)) }
            return ActionOutput(bytes: JSONValue.array(strings).compactJSON, exitCode: nil)
        }.recover(on: nil) { error -> Promise<ActionOutput> in
            group.stop(.settled)
            throw error
        }
    }

    /// All in parallel; the value is the first output. The others are
    /// stopped once one fulfils; when every one fails, the error lists why.
    private func any(_ actions: [Action], input: [UInt8], _ context: ActionContext) -> Promise<ActionOutput> {
        let group = AttemptControl()
        context.control.onStop { group.stop($0) }
        var inner = context
        inner.control = group
        let failures = FailureList(count: actions.count)
        let runs = actions.enumerated().map { index, action in
            run(action, input: input, inner).recover(on: nil) { error -> Promise<ActionOutput> in
                failures.set(index, Self.labelled(error, "any[\(index)] (\(action.keyword))"))
                throw error
            }
        }
        return race(fulfilled: runs).map(on: nil) { output in
            group.stop(.settled)
            return ActionOutput(bytes: output.bytes, exitCode: nil)
        }.recover(on: nil) { _ -> Promise<ActionOutput> in
            throw failures.combined()
        }
    }

    /// `error` as an `EngineError` whose message starts with `label`.
    static func labelled(_ error: any Error, _ label: String) -> EngineError {
        var failure = error as? EngineError ?? EngineError(.stageFailed, "\(error)")
        if failure.code == .stageFailed { failure.message = "\(label): \(failure.message)" }
        return failure
    }
}

/// The failures of a race's actions, by index.
private final class FailureList: Sendable {
    private let failures: Mutex<[EngineError?]>

    init(count: Int) {
        failures = Mutex(Array(repeating: nil, count: count))
    }

    func set(_ index: Int, _ error: EngineError) {
        failures.withAnnouncedLock { $0[index] = error }
    }

    /// One error for them all: timed out if any timed out, else failed.
    func combined() -> EngineError {
        let all = failures.withAnnouncedLock { $0.compactMap { $0 } }
        if let jobError = all.first(where: { !$0.isRecoverable }) { return jobError }
        let code: EngineError.Code = all.contains { $0.code == .stageTimedOut } ? .stageTimedOut : .stageFailed
        return EngineError(code, "every action of the race failed:\n" + all.map(\.message).joined(separator: "\n"))
    }
}
