import JobConfig
import JobStore

/// A parent's children as `jobctl status` shows them: how many are in
/// each state, and the first few rejected, with their errors.
struct ChildrenSummary {
    /// How many rejected children are shown with their errors.
    static let rejectedShown = 3
    /// The most children read for the counts.
    static let readLimit = 1_000_000

    var total: Int
    var counts: [(JobState, Int)]
    var rejected: [Job]

    init?(_ children: [Job]) {
        guard !children.isEmpty else { return nil }
        total = children.count
        let byState = Dictionary(grouping: children, by: \.state)
        counts = JobState.allCases.compactMap { state in byState[state].map { (state, $0.count) } }
        rejected = Array((byState[.rejected] ?? []).prefix(Self.rejectedShown))
    }

    /// `97 fulfilled, 2 rejected, 1 running`.
    var countsText: String {
        counts.map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", ")
    }

    var json: JSON {
        .fields([
            ("total", .int(total)),
            ("by_state", .fields(counts.map { ($0.0.rawValue, .int($0.1)) })),
            (
                "rejected",
                .array(
                    rejected.map { child in
                        .fields([
                            ("id", .int(child.id)),
                            ("item_index", .optional(child.itemIndex.map(Int64.init))),
                            ("error", .optional(child.error)),
                        ])
                    })
            ),
        ])
    }
}
