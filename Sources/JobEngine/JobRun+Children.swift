import Foundation
import JobConfig
import JobConfigStore
import JobStore
import Promises
import Synchronization

/// Stages that start child jobs (`each`, or `then` with `definition:`):
/// PromiseKit's `when(fulfilled:)` / `when(resolved:)` over jobs, joined in
/// the store. The stage's body splits its value into the children's inputs
/// and asks the store to start them and join them
/// (``JobChildStore/joinChildren(_:completion:)``). Either they have all
/// ended — the stage's value is built from their outcomes — or the job
/// waits: its run ends here without resolving it, holding no pool slot,
/// lease or timer, and the job is claimed again (on any host) once its
/// last child has ended; the stage then runs again and the store, finding
/// the children there, only settles them.
extension JobRun {
    func joinChildren(_ stage: StageDefinition, _ spec: ChildSpec, input: [UInt8]) -> Promise<ActionOutput> {
        if let refusal = refusal(for: stage) { return Promise(error: refusal) }
        let number = firstAttemptNumber(at: stage.position)
        let startedAt = context.databaseClock.now()
        note(Attempt(position: stage.position, number: number, startedAt: startedAt))
        let children: [NewJob]
        do {
            children = try childJobs(stage, spec, input: input)
        } catch {
            return Promise(error: error)
        }
        let join = ChildJoin(
            lease: lease, position: stage.position, attempt: number, parentAttempt: claimed.job.attempt,
            failFast: spec.settle == .failFast, children: children, at: startedAt)
        let store = context.store
        let answer = Mutex<ChildJoinOutcome?>(nil)
        let (promise, resolver) = Promise<ActionOutput>.pending()
        persist(
            "start the child jobs of stage `\(stage.name)`", position: stage.position,
            { done in
                store.joinChildren(join) { result in
                    if case let .success(outcome) = result { answer.withLock { $0 = outcome } }
                    done(result.map { _ in () })
                }
            }
        ) { result, _ in
            switch (result, answer.withLock { $0 }) {
            case let (.success, .waiting(count)?):
                resolver.reject(
                    EngineError(
                        .waitingForChildren,
                        "waits for \(count) child job\(count == 1 ? "" : "s") of stage `\(stage.name)`; "
                            + "it is claimed again when they have ended",
                        jobID: self.id, position: stage.position))
            case let (.success, .settled(outcomes)?):
                do {
                    resolver.fulfill(ActionOutput(bytes: try self.value(of: outcomes, stage, spec), exitCode: nil))
                } catch {
                    resolver.reject(error)
                }
            case let (.failure(error as JobStoreError), _) where error.code == .valueTooLarge:
                resolver.reject(
                    EngineError(
                        .stageFailed, "stage `\(stage.name)` cannot start its child jobs: \(error.message)",
                        jobID: self.id, position: stage.position))
            case let (.failure(error), _):
                resolver.reject(
                    self.storeFailure(
                        error, doing: "start the child jobs of stage `\(stage.name)`", position: stage.position))
            case (.success, nil):
                resolver.reject(
                    EngineError(
                        .storeFailed, "the store gave no answer on the child jobs of stage `\(stage.name)`",
                        jobID: self.id, position: stage.position))
            }
        }
        return promise
    }

    /// The children to start, checked before any is: a known definition,
    /// items that split, at most `max-children`, each under the value cap.
    private func childJobs(_ stage: StageDefinition, _ spec: ChildSpec, input: [UInt8]) throws -> [NewJob] {
        func failure(_ message: String) -> EngineError {
            EngineError(.stageFailed, "stage `\(stage.name)`: \(message)", jobID: id, position: stage.position)
        }
        guard let child = definitions[spec.definition] else {
            throw failure(
                "no job definition named `\(spec.definition)` is loaded for its child jobs; add jobs.d/\(spec.definition).yaml and reload jobd"
            )
        }
        let items: [[UInt8]]
        do {
            items = try spec.inputs(from: input)
        } catch {
            throw failure("cannot split its value into child jobs: \(error.message)")
        }
        guard items.count <= spec.maxChildren else {
            throw failure(
                "its value has \(items.count) items, more than its max-children of \(spec.maxChildren); no child job was started"
            )
        }
        let cap = context.configuration.outputLimit
        if let index = items.firstIndex(where: { $0.count > cap }) {
            throw failure(
                "item \(index) is \(items[index].count) bytes, more than the store keeps as a job's input (\(cap) bytes); no child job was started"
            )
        }
        // As a submit of the child's definition would make it: its limit key too.
        return items.map { item in child.newJob(input: Data(item), priority: claimed.job.priority) }
    }

    /// The stage's value from its children's outcomes, in item order: with
    /// fail-fast their results (one child of a `then`: its result itself),
    /// or the error of the first that did not fulfil; with `all`, each
    /// child's state with its result or error.
    private func value(of outcomes: [ChildOutcome], _ stage: StageDefinition, _ spec: ChildSpec) throws -> [UInt8] {
        func text(_ data: Data?) -> String { String(decoding: data ?? Data(), as: UTF8.self) }
        switch spec.settle {
        case .failFast:
            let failed = outcomes.filter { $0.state == .rejected || $0.state == .cancelled }
            if let first = failed.min(by: {
                ($0.finishedAt ?? .distantFuture, $0.itemIndex) < ($1.finishedAt ?? .distantFuture, $1.itemIndex)
            }) {
                throw EngineError(
                    .stageFailed,
                    "child job \(first.id) (item \(first.itemIndex) of stage `\(stage.name)`, \(spec.definition)) was \(first.state.rawValue): \(first.error ?? "no error recorded")",
                    jobID: id, position: stage.position)
            }
            if case .whole = spec.items, let only = outcomes.first, outcomes.count == 1 {
                return Array(only.result ?? Data())
            }
            return JSONValue.array(outcomes.map { .string(text($0.result)) }).compactJSON
        case .all:
            let entries = outcomes.map { outcome -> JSONValue in
                let detail: JSONValue.Member =
                    outcome.state == .fulfilled
                    ? JSONValue.Member(key: "result", value: .string(text(outcome.result)))
                    : JSONValue.Member(key: "error", value: .string(outcome.error ?? ""))
                return .object([JSONValue.Member(key: "state", value: .string(outcome.state.rawValue)), detail])
            }
            return JSONValue.array(entries).compactJSON
        }
    }
}

extension JobDefinition {
    /// Whether a stage of it starts child jobs.
    var startsChildren: Bool {
        stages.contains { stage in
            if case .children = stage.action { return true }
            return false
        }
    }
}
