/// A store whose connections keep memory for reuse — page caches filled by
/// the pages last read, prepared statements — and can hand it back at a
/// quiet moment, at the cost of reading those pages again on next use.
///
/// jobd calls it once the dashboard has made no page for a while: a page of
/// a job with large values or many events fills the read connections'
/// caches (up to `readerCacheKiB` each) with pages nothing else reads, and
/// without this they would hold that memory until replaced.
public protocol ReleasesIdleMemory: Sendable {
    /// Returns once every connection has let go of its memory: it waits for
    /// the reads and the write under way, so call it off the engine's and
    /// the listener's threads.
    func releaseIdleMemory()
}
