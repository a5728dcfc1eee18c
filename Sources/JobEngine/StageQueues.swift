import Dispatch
import JobConfig
import Synchronization

/// One `Q` entry of jobd.yaml as dispatch queues: at most `concurrency`
/// stage bodies run on it at once, and no thread ever waits for a slot.
///
/// Concurrency 1 is one serial queue. Concurrency N is N serial queues
/// (slots): each stage body is given a slot when its job's chain is built
/// (round robin), so at most N bodies run at once and a body waits, if it
/// must, in a queue — never on a thread. The slots are plain serial queues
/// (libdispatch runs those on its overcommit pool), not children of one
/// concurrent queue: a concurrent queue runs on the pool of one thread per
/// core, which anything else in the process that blocks such threads would
/// starve.
public final class StageQueue: Sendable {
    public let name: String
    /// This `Q` entry as one queue, for `conf.Q`: the serial queue, or a
    /// concurrent queue (the engine itself always dispatches to a slot).
    public let queue: DispatchQueue
    let slots: [DispatchQueue]
    private let nextSlot = Atomic<Int>(0)

    init(name: String, concurrency: Int) {
        self.name = name
        let width = max(1, concurrency)
        if width == 1 {
            let serial = DispatchQueue(label: "jobd.Q.\(name)")
            queue = serial
            slots = [serial]
        } else {
            queue = DispatchQueue(label: "jobd.Q.\(name)", attributes: .concurrent)
            slots = (0..<width).map { DispatchQueue(label: "jobd.Q.\(name).\($0)") }
        }
    }

    /// The slot for the next body.
    func slot() -> DispatchQueue {
        guard slots.count > 1 else { return slots[0] }
        let ticket = nextSlot.add(1, ordering: .relaxed).oldValue
        return slots[ticket % slots.count]
    }
}

/// Every `Q` entry, by name.
public struct StageQueues: Sendable {
    public let byName: [String: StageQueue]

    /// `queues`: concurrency by name; `map` (4) and `return` (1) are added
    /// when missing.
    public init(_ queues: [String: Int]) {
        var byName: [String: StageQueue] = [:]
        for (name, concurrency) in queues {
            byName[name] = StageQueue(name: name, concurrency: concurrency)
        }
        for name in [EngineConfiguration.mapQueue, EngineConfiguration.returnQueue] where byName[name] == nil {
            byName[name] = StageQueue(name: name, concurrency: name == EngineConfiguration.mapQueue ? 4 : 1)
        }
        self.byName = byName
    }

    public var map: StageQueue { byName[EngineConfiguration.mapQueue]! }
    public var `return`: StageQueue { byName[EngineConfiguration.returnQueue]! }

    /// The queue of a stage: its `on:`, else its kind's default.
    func queue(for stage: StageDefinition) -> StageQueue {
        byName[stage.queue] ?? byName[stage.kind.defaultQueue] ?? map
    }
}
