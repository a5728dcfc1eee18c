import Foundation
import JobStore
import JobStoreSQLite
import Synchronization

/// How a job's writes wait for each other.
public enum CycleMode: String, Sendable {
    /// Every write waits for the acknowledgement of the one before.
    case sequential
    /// Same, with a stage-start write before each stage result.
    case withStarts
    /// A job's stage results and finish are sent without waiting for each
    /// other (the writer keeps their order); the job waits for all the
    /// acknowledgements before its worker claims the next.
    case pipelined
}

/// Workers that run jobs the way the engine does: each step starts from the
/// completion handler of the one before, no thread waits.
final class CycleLanes: Sendable {
    private struct Tally {
        var lanesLeft: Int
        var finished = 0
        var failures: [String] = []
    }

    private let store: SQLiteJobStore
    private let mode: CycleMode
    private let lanes: Int
    private let flow: ClaimFlow
    private let tally: Mutex<Tally>
    private let done: CheckedContinuation<(Int, [String]), Never>

    init(
        store: SQLiteJobStore, mode: CycleMode, lanes: Int, flow: ClaimFlow,
        done: CheckedContinuation<(Int, [String]), Never>
    ) {
        self.store = store
        self.flow = flow
        self.mode = mode
        self.lanes = lanes
        self.tally = Mutex(Tally(lanesLeft: lanes))
        self.done = done
    }

    func start() {
        for lane in 0..<lanes { claimNext(lane) }
    }

    private func claimNext(_ lane: Int) {
        store.claim(pool: "default", owner: "worker-\(lane)", limit: 1, leaseDuration: .seconds(60), flow: flow) {
            result in
            switch result {
            case .success(let jobs):
                if let job = jobs.first {
                    self.run(job, lane: lane)
                } else {
                    self.laneDone()
                }
            case .failure(let error):
                self.fail(error)
                self.laneDone()
            }
        }
    }

    private func run(_ job: ClaimedJob, lane: Int) {
        var value = job.resumeValue ?? Data()
        switch mode {
        case .sequential, .withStarts:
            step(job, position: job.resumePosition, value: value, lane: lane)
        case .pipelined:
            let outstanding = Mutex(job.stages.count - job.resumePosition + 1)
            let finishOne: @Sendable (Result<Void, any Error>) -> Void = { result in
                if case .failure(let error) = result { self.fail(error) }
                if outstanding.withLock({
                    $0 -= 1
                    return $0
                }) == 0 {
                    self.tally.withLock { $0.finished += 1 }
                    self.claimNext(lane)
                }
            }
            for position in job.resumePosition..<job.stages.count {
                value.append(UInt8(ascii: "+"))
                store.recordStageResult(
                    StageResult(lease: job.lease, position: position, outcome: .fulfilled(value), exitCode: 0),
                    completion: finishOne)
            }
            store.finish(JobFinish(lease: job.lease, outcome: .fulfilled(value)), completion: finishOne)
        }
    }

    private func step(_ job: ClaimedJob, position: Int, value: Data, lane: Int) {
        guard position < job.stages.count else {
            store.finish(JobFinish(lease: job.lease, outcome: .fulfilled(value))) { result in
                if case .failure(let error) = result { self.fail(error) }
                self.tally.withLock { $0.finished += 1 }
                self.claimNext(lane)
            }
            return
        }
        var next = value
        next.append(UInt8(ascii: "+"))
        let writeResult: @Sendable () -> Void = { [next] in
            self.store.recordStageResult(
                StageResult(lease: job.lease, position: position, outcome: .fulfilled(next), exitCode: 0)
            ) { result in
                if case .failure(let error) = result { self.fail(error) }
                self.step(job, position: position + 1, value: next, lane: lane)
            }
        }
        if mode == .withStarts {
            store.recordStageStart(StageStart(lease: job.lease, position: position)) { result in
                if case .failure(let error) = result { self.fail(error) }
                writeResult()
            }
        } else {
            writeResult()
        }
    }

    private func fail(_ error: any Error) {
        tally.withLock { $0.failures.append("\(error)") }
    }

    private func laneDone() {
        let result = tally.withLock { tally -> (Int, [String])? in
            tally.lanesLeft -= 1
            return tally.lanesLeft == 0 ? (tally.finished, tally.failures) : nil
        }
        if let result { done.resume(returning: result) }
    }
}
