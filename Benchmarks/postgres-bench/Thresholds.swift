/// The bounds postgres-bench holds each figure to.
enum Thresholds {
    /// Two jobds running three-stage in-process pipelines, every stage
    /// persisted, against the plain pgbench loop of the same writes in the
    /// same run.
    static let throughputRatio = 2.0
    /// The same two jobds with concurrency limits that do not bind, in
    /// percent of the rate without, same run.
    static let limitsShare = 90.0
    /// Submit on a host without a jobd → start on another host, the jobds idle.
    static let latencyP50 = 10.0
    static let latencyP99 = 50.0
    /// The last child's end → its parent's stage settled, over two jobds.
    static let joinP50 = 50.0
}
