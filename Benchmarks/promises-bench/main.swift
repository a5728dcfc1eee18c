// promises-bench: the Promises library beside raw DispatchQueue.async hops
// measured in the same run; each ratio is held to a threshold
// (Thresholds.swift) and the bench exits 1 when one misses.
//
//     swift run -c release promises-bench [--quick] [--tsv FILE]
//
// Two raw baselines, because a "hop" has two common shapes:
//  - enqueued: one thread calls `queue.async` N times, then waits for the
//    queue to drain — the cost of submitting a closure and running it;
//  - chained: each block, running on the queue, submits the next — the
//    shape of a promise chain whose every step runs on a queue (cheaper:
//    no thread hand-off).
// Each promise case is compared with the raw shape it matches.
import BenchmarkSupport
import Dispatch
import Foundation
import Promises

let operations = 200_000
let queue = DispatchQueue(label: "bench.serial")

/// State touched by one thread at a time (the queue, or the main thread).
final class Counter: @unchecked Sendable {
    var value = 0
}

/// Nanoseconds on the monotonic clock.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// One run of `body`, which performs `operations` operations: ns each.
/// Each case is run once per round, rounds interleaved, so that a burst of
/// load on this shared machine hits a case and its raw hop alike.
func nsPerOperation(_ body: () -> Void) -> Double {
    let start = now()
    body()
    return Double(now() - start) / Double(operations)
}

// MARK: raw GCD

func rawChainStep(_ remaining: Int, _ counter: Counter, _ finished: DispatchSemaphore) {
    counter.value += 1
    if remaining == 0 {
        finished.signal()
    } else {
        queue.async { rawChainStep(remaining - 1, counter, finished) }
    }
}

@inline(never)
func rawChained() -> Double {
    nsPerOperation {
        for _ in 0..<(operations / chainLength) {
            let finished = DispatchSemaphore(value: 0)
            let counter = Counter()
            queue.async { rawChainStep(chainLength - 1, counter, finished) }
            finished.wait()
            precondition(counter.value == chainLength)
        }
    }
}

@inline(never)
func rawEnqueued() -> Double {
    nsPerOperation {
        let counter = Counter()
        for _ in 0..<operations {
            queue.async { counter.value += 1 }
        }
        queue.sync {}
        precondition(counter.value == operations)
    }
}

// MARK: Promises

/// Chains of `chainLength` `map(on:)`s, each built on a pending promise and
/// then fulfilled, until `operations` hops have run. (Deep chains are
/// tested for correctness in the test suite; a benchmark of one 200,000-hop
/// chain would mostly measure malloc holding 30 MB of links.)
let chainLength = 100

@inline(never)
func mapChain(on target: DispatchQueue?) -> Double {
    nsPerOperation {
        for _ in 0..<(operations / chainLength) {
            let (head, resolver) = Promise<Int>.pending()
            var tail = head
            for _ in 0..<chainLength {
                tail = tail.map(on: target) { $0 + 1 }
            }
            resolver.fulfill(0)
            precondition(try! tail.wait() == chainLength)
        }
    }
}

/// `map(on:)` called on one resolved promise, `operations` times.
@inline(never)
func mapResolved(on target: DispatchQueue?) -> Double {
    nsPerOperation {
        let source = Promise.value(1)
        var last = source
        for _ in 0..<operations {
            last = source.map(on: target) { $0 + 1 }
        }
        if target != nil { queue.sync {} }
        precondition(last.value == 2)
    }
}

/// `pending()`, a `done(on: nil)` handler, then fulfil — one promise at a time.
@inline(never)
func pendingDoneFulfil() -> Double {
    nsPerOperation {
        let sum = Counter()
        for index in 0..<operations {
            let (promise, resolver) = Promise<Int>.pending()
            _ = promise.done(on: nil) { sum.value += $0 }
            resolver.fulfill(index)
        }
        precondition(sum.value == (operations - 1) * operations / 2)
    }
}

/// Heap bytes (malloc chunks, headers and rounding included) per item while
/// `count` items built by `make` are alive.
func heapBytesPerItem<Item>(count: Int, _ make: () -> Item) -> Double {
    var items: [Item] = []
    items.reserveCapacity(count)
    let before = heapBytesInUse()
    for _ in 0..<count {
        items.append(make())
    }
    let after = heapBytesInUse()
    withExtendedLifetime(items) {}
    return Double(after - before) / Double(count)
}

/// A pending promise from `pending()`, its resolver, and one handler that
/// captures its context (as real handlers do).
@inline(never)
func bytesPendingWithHandler() -> Double {
    let sink = Counter()
    return heapBytesPerItem(count: 100_000) { () -> (Promise<Int>, Resolver<Int>) in
        let (promise, resolver) = Promise<Int>.pending()
        promise.pipe { result in
            if case .fulfilled(let value) = result { sink.value += value }
        }
        return (promise, resolver)
    }
}

/// A link of a pending chain: `map(on: nil)` on a pending promise.
@inline(never)
func bytesChainLink() -> Double {
    let (head, resolver) = Promise<Int>.pending()
    var tail = head
    let bytes = heapBytesPerItem(count: 100_000) { () -> Promise<Int> in
        let link = tail.map(on: nil) { $0 + 1 }
        tail = link
        return link
    }
    resolver.fulfill(0)
    return bytes
}

// MARK: report

// The bench waits on the main thread and leaves pending promises behind on
// purpose: keep those events quiet.
conf.logHandler = { _ in }
conf.leakHandler = { _ in }

// BENCH_ONLY=prefix runs only the cases whose name starts with it and
// prints their times, no report (for profilers); BENCH_ROUNDS sets the
// number of rounds; BENCH_VERBOSE=1 prints every round's time too.
let arguments = BenchArguments(usage: "promises-bench [--quick] [--tsv FILE]")
let environment = ProcessInfo.processInfo.environment
let only = environment["BENCH_ONLY"]
let rounds = max(1, environment["BENCH_ROUNDS"].flatMap(Int.init) ?? (arguments.quick ? 10 : 15))
let cases: [(name: String, run: () -> Double)] = [
    ("raw-chained", rawChained),
    ("raw-enqueued", rawEnqueued),
    ("queue-chain", { mapChain(on: queue) }),
    ("queue-resolved", { mapResolved(on: queue) }),
    ("inline-chain", { mapChain(on: nil) }),
    ("inline-resolved", { mapResolved(on: nil) }),
    ("pending", pendingDoneFulfil),
]
/// The position of the case named `name` in `cases`.
@MainActor
func caseIndex(_ name: String) -> Int { cases.firstIndex { $0.name == name }! }
let (rawChainedCase, rawEnqueuedCase) = (caseIndex("raw-chained"), caseIndex("raw-enqueued"))
print("promises-bench: \(operations) operations a case, \(rounds) interleaved rounds; \(Machine.summary)")
// times[case][round]
var times = [[Double]](repeating: [], count: cases.count)
for _ in 0..<rounds {
    for (index, entry) in cases.enumerated() where only.map(entry.name.hasPrefix) ?? true {
        times[index].append(entry.run())
    }
}
let best = times.map { $0.min() ?? .infinity }
if environment["BENCH_VERBOSE"] != nil {
    // Every round of every case, fastest first: how much a case moves.
    for (index, entry) in cases.enumerated() where !times[index].isEmpty {
        print(entry.name + ": " + times[index].sorted().map { String(format: "%.0f", $0) }.joined(separator: " "))
    }
}
if only != nil {
    for (index, entry) in cases.enumerated() where best[index].isFinite {
        print("\(entry.name): \(String(format: "%.1f", best[index])) ns")
    }
    exit(0)
}

var report = Report("promises-bench", arguments)
report.add("raw hop, enqueued (queue.async from a thread)", best[rawEnqueuedCase], unit: "ns")
report.add("raw hop, chained (each block enqueues the next)", best[rawChainedCase], unit: "ns")

/// Case `name` against `baseline`: the median over rounds of the ratio
/// within a round, held to `limit`. Both were measured a moment apart, so
/// a burst of load hits them alike; the ratio of the best rounds, which one
/// lucky round of either moves, goes in the note.
@MainActor
func ratio(_ label: String, _ name: String, to baseline: Int, atMost limit: Double) {
    let index = caseIndex(name)
    let perRound = zip(times[index], times[baseline]).map { $0 / $1 }
    let shape = baseline == rawEnqueuedCase ? "enqueued" : "chained"
    report.add(
        "\(label) ÷ raw hop \(shape)", median(perRound), unit: "×", .atMost(limit),
        note: String(format: "best %.1f ns; ratio of the bests %.2f×", best[index], best[index] / best[baseline]),
        digits: 2)
}
ratio("map(on: serialQueue), resolved promise", "queue-resolved", to: rawEnqueuedCase, atMost: Thresholds.mapOnQueue)
ratio(
    "map(on: serialQueue), 100-hop chains, per hop", "queue-chain", to: rawChainedCase,
    atMost: Thresholds.mapOnQueueChain)
ratio("map(on: nil), resolved promise", "inline-resolved", to: rawEnqueuedCase, atMost: Thresholds.mapInline)
ratio(
    "map(on: nil), 100-hop pending chains, per hop", "inline-chain", to: rawEnqueuedCase,
    atMost: Thresholds.mapInlineChain)
ratio("pending() + done(on: nil) + fulfil", "pending", to: rawEnqueuedCase, atMost: Thresholds.pendingDoneFulfil)
report.add(
    "pending() + resolver + 1 capturing handler", bytesPendingWithHandler(), unit: "bytes",
    .atMost(Thresholds.pendingBytes), digits: 0)
report.add(
    "pending chain link (map on a pending promise)", bytesChainLink(), unit: "bytes",
    .atMost(Thresholds.chainLinkBytes), digits: 0)
report.finish()
