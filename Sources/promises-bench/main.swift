// promises-bench: the Promises library against a raw DispatchQueue.async hop
// measured in the same run. Run: swift run -c release promises-bench
import Dispatch
import Foundation
import CBenchSupport
import Promises

#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the monotonic clock.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Best of `rounds` runs of `body`, which does `count` operations: ns each.
func nsPerOp(count: Int, rounds: Int = 7, _ body: () -> Void) -> Double {
    var best = Double.infinity
    for _ in 0..<rounds {
        let start = now()
        body()
        best = min(best, Double(now() - start) / Double(count))
    }
    return best
}

let hops = 200_000

// The bench waits on the main thread and leaves pending promises behind on
// purpose: count those events instead of printing them.
let leaks = Counter()
conf.logHandler = { _ in }
conf.leakHandler = { _ in leaks.value += 1 }
let queue = DispatchQueue(label: "bench.serial")

/// A counter only ever touched on `queue`, or only on one thread.
final class Counter: @unchecked Sendable {
    var value = 0
}

// Raw GCD: a chain of async hops on one serial queue, each block scheduling
// the next — the shape of a promise chain whose every step runs on a queue.
func rawChain(_ remaining: Int, _ counter: Counter, _ done: DispatchSemaphore) {
    counter.value += 1
    if remaining == 0 {
        done.signal()
    } else {
        queue.async { rawChain(remaining - 1, counter, done) }
    }
}

let raw = nsPerOp(count: hops) {
    let done = DispatchSemaphore(value: 0)
    let counter = Counter()
    queue.async { rawChain(hops - 1, counter, done) }
    done.wait()
}

// map(on: serialQueue): a chain of maps built on a pending promise, then
// fulfilled; every hop is a dispatch to the queue.
@inline(never)
func benchMapOnQueue() -> Double {
    nsPerOp(count: hops) {
    let (head, resolver) = Promise<Int>.pending()
    var tail = head
    for _ in 0..<hops {
        tail = tail.map(on: queue) { $0 + 1 }
    }
    resolver.fulfill(0)
    precondition(try! tail.wait() == hops)
    }
}
let only = ProcessInfo.processInfo.environment["BENCH_ONLY"]
let mapOnQueue = only == nil || only == "queue" ? benchMapOnQueue() : 0

// map(on: nil): the same chain run inline.
@inline(never)
func benchMapInline() -> Double {
    nsPerOp(count: hops) {
    let (head, resolver) = Promise<Int>.pending()
    var tail = head
    for _ in 0..<hops {
        tail = tail.map(on: nil) { $0 + 1 }
    }
    resolver.fulfill(0)
    precondition(tail.value == hops)
    }
}
let mapInline = only == nil || only == "inline" ? benchMapInline() : 0

// pending() + done(on: nil) + fulfil, one promise after another.
@inline(never)
func benchPendingDone() -> Double {
    nsPerOp(count: hops) {
    let sum = Counter()
    for index in 0..<hops {
        let (promise, resolver) = Promise<Int>.pending()
        _ = promise.done(on: nil) { sum.value += $0 }
        resolver.fulfill(index)
    }
    precondition(sum.value == (hops - 1) * hops / 2)
    }
}
let pendingDone = only == nil || only == "pending" ? benchPendingDone() : 0

/// Bytes of heap (malloc chunks, headers and rounding included) per item
/// while `count` items built by `make` are alive.
func bytesPerItem<Item>(count: Int, _ make: () -> Item) -> Double {
    var items: [Item] = []
    items.reserveCapacity(count)
    let before = bench_heap_bytes_in_use()
    for _ in 0..<count {
        items.append(make())
    }
    let after = bench_heap_bytes_in_use()
    withExtendedLifetime(items) {}
    return Double(after - before) / Double(count)
}

@inline(never)
func measurePending(_ sink: Counter) -> Double {
    bytesPerItem(count: 100_000) { () -> (Promise<Int>, Resolver<Int>) in
        let (promise, resolver) = Promise<Int>.pending()
        promise.pipe { result in
            if case .fulfilled(let value) = result { sink.value += value }
        }
        return (promise, resolver)
    }
}

@inline(never)
func measureChainLink(_ sink: Counter) -> Double {
    bytesPerItem(count: 100_000) { () -> Promise<Int> in
        let promise = Promise<Int>(.pending)
        promise.pipe { result in
            if case .fulfilled(let value) = result { sink.value += value }
        }
        return promise
    }
}

// Each handler captures a counter, as a real handler captures its context.
let pendingWithHandler = measurePending(Counter())
let chainLinkWithHandler = measureChainLink(Counter())

func row(_ name: String, _ ns: Double, target: Double) {
    let ratio = ns / raw
    let verdict = ratio <= target ? "ok" : "MISSED"
    print(name.padding(toLength: 44, withPad: " ", startingAt: 0)
          + String(format: "%8.1f ns  %5.2f× raw  (target ≤ %.1f×)  %@", ns, ratio, target, verdict))
}

print("Promises benchmark — \(hops) operations per round, best of 7 rounds")
print("raw DispatchQueue.async hop (baseline)".padding(toLength: 44, withPad: " ", startingAt: 0)
      + String(format: "%8.1f ns", raw))
row("map(on: serialQueue), per hop", mapOnQueue, target: 1.5)
row("map(on: nil), per hop", mapInline, target: 0.3)
row("pending() + done(on: nil) + fulfil", pendingDone, target: 1.0)
print(String(format: "pending() promise + resolver + 1 handler      %6.0f bytes  (target ≤ 150)  %@",
             pendingWithHandler, pendingWithHandler <= 150 ? "ok" : "MISSED"))
print(String(format: "chain promise + 1 handler                     %6.0f bytes", chainLinkWithHandler))
