import Dispatch
import Synchronization

/// One `Q` entry of jobd.yaml as dispatch queues: at most `concurrency`
/// stage bodies run on it at once, and no thread ever waits for a slot.
///
/// Concurrency 1 is one serial queue. Concurrency N is N serial queues
/// (slots) targeting one concurrent queue: each stage body is given a slot
/// when its job's chain is built (round robin), so at most N bodies run at
/// once and a body waits, if it must, in a queue — never on a thread.
public final class StageQueue: Sendable {
    public let name: String
    /// Where bodies run when they run on this `Q` entry as a whole (what
    /// `conf.Q` is set to): the serial queue, or the slots' target.
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
            let parent = DispatchQueue(label: "jobd.Q.\(name)", attributes: .concurrent)
            queue = parent
            slots = (0..<width).map { DispatchQueue(label: "jobd.Q.\(name).\($0)", target: parent) }
        }
    }

    /// The slot for the next body.
    func slot() -> DispatchQueue {
        guard slots.count > 1 else { return slots[0] }
        let ticket = nextSlot.add(1, ordering: .relaxed).oldValue
        return slots[ticket % slots.count]
    }
}

/// Every `Q` entry of jobd.yaml, by name.
public struct StageQueues: Sendable {
    public let byName: [String: StageQueue]

    public init(_ queues: [String: QueueConfig]) {
        var byName: [String: StageQueue] = [:]
        for (name, config) in queues {
            byName[name] = StageQueue(name: name, concurrency: config.concurrency)
        }
        for name in [DaemonConfig.mapQueue, DaemonConfig.returnQueue] where byName[name] == nil {
            byName[name] = StageQueue(name: name, concurrency: name == DaemonConfig.mapQueue ? 4 : 1)
        }
        self.byName = byName
    }

    public var map: StageQueue { byName[DaemonConfig.mapQueue]! }
    public var `return`: StageQueue { byName[DaemonConfig.returnQueue]! }

    /// The queue of a stage: its `on:`, else its kind's default.
    func queue(for stage: StageDefinition) -> StageQueue {
        byName[stage.queue] ?? byName[stage.kind.defaultQueue] ?? map
    }
}
