import Dispatch
import Locking
import Synchronization

/// Deadlines in a binary min-heap, fired by one `DispatchSourceTimer` armed
/// for the earliest.
final class TimerHeap: Sendable {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
        var body: @Sendable () -> Void
    }

    private struct State {
        var entries: [Entry] = []
        /// Where each id sits in `entries`.
        var slots: [UInt64: Int] = [:]
        var nextID: UInt64 = 1
        /// The deadline the source is armed for.
        var armed: UInt64 = .max
    }

    private let state = Mutex(State())
    private let source: SourceBox

    init() {
        let queue = DispatchQueue(label: "jobd.engine.timer-heap")
        source = SourceBox(DispatchSource.makeTimerSource(queue: queue))
        source.timer.setEventHandler { [unowned self] in self.fire() }
        source.timer.schedule(deadline: .distantFuture)
        source.timer.resume()
    }

    func add(deadline: DispatchTime, _ body: @escaping @Sendable () -> Void) -> UInt64 {
        state.withAnnouncedLock { state -> UInt64 in
            let id = state.nextID
            state.nextID += 1
            state.entries.append(Entry(deadline: deadline.uptimeNanoseconds, id: id, body: body))
            state.slots[id] = state.entries.count - 1
            Self.siftUp(&state, state.entries.count - 1)
            rearm(&state)
            return id
        }
    }

    func remove(_ id: UInt64) {
        state.withAnnouncedLock { state in
            guard let slot = state.slots[id] else { return }
            Self.remove(&state, at: slot)
        }
    }

    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        var due: [@Sendable () -> Void] = []
        state.withAnnouncedLock { state in
            while let first = state.entries.first, first.deadline <= now {
                due.append(first.body)
                Self.remove(&state, at: 0)
            }
            state.armed = .max
            rearm(&state)
        }
        for body in due { body() }
    }

    /// Arms the source for the earliest deadline if that is earlier than
    /// what it is armed for. Under the lock, so that two threads arming it
    /// cannot leave it armed for the later of two deadlines.
    private func rearm(_ state: inout State) {
        guard let first = state.entries.first, first.deadline < state.armed else { return }
        state.armed = first.deadline
        source.timer.schedule(deadline: DispatchTime(uptimeNanoseconds: first.deadline))
    }

    private static func remove(_ state: inout State, at slot: Int) {
        let last = state.entries.count - 1
        state.slots[state.entries[slot].id] = nil
        if slot != last {
            state.entries.swapAt(slot, last)
            state.slots[state.entries[slot].id] = slot
        }
        state.entries.removeLast()
        if slot < state.entries.count {
            siftDown(&state, slot)
            siftUp(&state, slot)
        }
    }

    private static func siftUp(_ state: inout State, _ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard state.entries[child].deadline < state.entries[parent].deadline else { return }
            swap(&state, child, parent)
            child = parent
        }
    }

    private static func siftDown(_ state: inout State, _ start: Int) {
        var parent = start
        let count = state.entries.count
        while true {
            var smallest = parent
            for child in [2 * parent + 1, 2 * parent + 2]
            where child < count
                && state.entries[child].deadline < state.entries[smallest].deadline
            {
                smallest = child
            }
            guard smallest != parent else { return }
            swap(&state, parent, smallest)
            parent = smallest
        }
    }

    private static func swap(_ state: inout State, _ a: Int, _ b: Int) {
        state.entries.swapAt(a, b)
        state.slots[state.entries[a].id] = a
        state.slots[state.entries[b].id] = b
    }

    var count: Int { state.withAnnouncedLock { $0.entries.count } }
}

/// The timer source, shared by every thread that arms it.
private final class SourceBox: @unchecked Sendable {
    // @unchecked Sendable: a dispatch source is thread-safe (libdispatch
    // documents `schedule` and `setEventHandler` as callable from any
    // thread); the reference itself is a `let`.
    let timer: any DispatchSourceTimer

    init(_ timer: any DispatchSourceTimer) {
        self.timer = timer
    }
}
