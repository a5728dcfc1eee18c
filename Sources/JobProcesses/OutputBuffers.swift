/// Stdout as it arrives, up to a limit; past it the bytes are dropped and
/// `overflowed` is set (the run is then rejected, never truncated).
struct CappedOutput {
    let limit: Int
    private(set) var bytes: [UInt8] = []
    private(set) var overflowed = false

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Appends `chunk`; false once the total went past the limit.
    mutating func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard !overflowed else { return false }
        guard bytes.count + chunk.count <= limit else {
            overflowed = true
            bytes = []
            return false
        }
        bytes.append(contentsOf: chunk)
        return true
    }
}

/// The last `limit` bytes of a stream (stderr), in amortised O(1) per byte.
struct TailBuffer {
    let limit: Int
    private var storage: [UInt8] = []

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        guard limit > 0 else { return }
        if chunk.count >= limit {
            storage = Array(chunk[(chunk.count - limit)...])
            return
        }
        storage.append(contentsOf: chunk)
        if storage.count > 2 * limit {
            storage.removeFirst(storage.count - limit)
        }
    }

    var bytes: [UInt8] {
        storage.count <= limit ? storage : Array(storage[(storage.count - limit)...])
    }
}
