import Foundation
import JobConfig
import JobStore

/// Jobs for people: `status`'s page of one job, `list`'s table rows.
struct JobText {
    let console: Console
    /// Values and errors are cut to fit the terminal; whole when false.
    let shorten: Bool
    let now: Date
    /// `list` has a NODE column: the host that runs or ran each job.
    var showsNode = false

    static func color(_ state: JobState) -> Console.Color? {
        switch state {
        case .pending: nil
        case .running: .cyan
        case .fulfilled: .green
        case .rejected: .red
        case .cancelled: .yellow
        }
    }

    static func color(_ state: StageState) -> Console.Color? {
        switch state {
        case .pending, .skipped: .dim
        case .running: .cyan
        case .fulfilled: .green
        case .rejected: .red
        }
    }

    /// How long it ran: start to finish, or start to now while it runs.
    func duration(from start: Date?, to end: Date?, running: Bool) -> String {
        guard let start else { return "-" }
        guard let end = end ?? (running ? now : nil) else { return "-" }
        return Formatting.duration(milliseconds: Formatting.milliseconds(from: start, to: end) ?? 0)
    }

    /// A name or word read from the database (a definition, a pool, a
    /// stage's name, a lease owner): whoever wrote the row chose it, so it
    /// is escaped for the terminal as values are.
    static func safe(_ text: String) -> String {
        Formatting.oneLine(text)
    }

    private func value(_ data: Data?, room: Int) -> String {
        Formatting.valueText(data, limit: shorten ? max(16, room) : nil)
    }

    private func text(_ text: String, room: Int) -> String {
        Formatting.oneLine(text, limit: shorten ? max(16, room) : nil)
    }

    /// `status ID`: the job, then one row per stage, then earlier attempts and events.
    func page(
        _ detail: JobDetail, history: [JobAttempt], events: [JobEvent], children: ChildrenSummary? = nil,
        wait: WaitReason? = nil, firing: ScheduleFiring? = nil
    ) -> String {
        let job = detail.job
        let width = console.width ?? 100
        var lines: [String] = []
        let state = console.paint(job.state.rawValue, Self.color(job.state))
        lines.append(
            "job \(job.id)  \(Self.safe(job.definition))  \(state)  attempt \(job.attempt)"
                + (job.cancelRequested && !job.state.isResolved ? "  (cancel requested)" : ""))
        var facts = Table(["", ""])
        facts.showsHeader = false
        func fact(_ label: String, _ value: String) { facts.add([Table.Cell(label, .dim), Table.Cell(value)]) }
        fact(
            "pool",
            "\(Self.safe(job.pool)), priority \(job.priority)"
                + (job.idempotencyKey.map { ", key \(Self.safe($0))" } ?? ""))
        fact("created", Formatting.timestamp(job.createdAt))
        if let instant = job.scheduledFor { fact("scheduled", Self.scheduled(instant, firing)) }
        if job.state == .pending, job.runAt > job.createdAt { fact("runs at", Formatting.timestamp(job.runAt)) }
        if let started = job.startedAt { fact("started", Formatting.timestamp(started)) }
        if let finished = job.finishedAt {
            fact(
                "finished",
                Formatting.timestamp(finished)
                    + "  (took \(duration(from: job.startedAt, to: finished, running: false)))")
        }
        if let owner = job.leaseOwner {
            // The node that runs the job (or ran it last), and while it runs, its lease.
            fact(
                "node",
                Self.safe(LeaseOwner.node(of: owner)) + (job.state == .running ? "  (lease \(Self.safe(owner)))" : ""))
        }
        let room = width - 12
        fact("input", job.input == nil ? "-" : value(job.input, room: room))
        if job.result != nil { fact("result", value(job.result, room: room)) }
        if let error = job.error { fact("error", text(error, room: room)) }
        if let parent = job.parentID {
            let stage = job.parentStage.map { ", stage \($0 + 1)" } ?? ""
            let item = job.itemIndex.map { ", item \($0)" } ?? ""
            fact("parent", "job \(parent)\(stage)\(item)")
        }
        if let wait {
            // Names in the reason (a key, a pool, a pause's reason) come from the database.
            let more = wait.code == .children ? " (jobctl list --parent \(job.id))" : ""
            fact("why", Self.safe(wait.long) + more)
        }
        if let children {
            fact("children", "\(children.total): \(children.countsText)")
            for child in children.rejected {
                let item = child.itemIndex.map { "item \($0), " } ?? ""
                fact(
                    "",
                    "rejected: job \(child.id) (\(item)\(Self.safe(child.definition))): "
                        + text(child.error ?? "", room: room - 30))
            }
        }
        lines += facts.render(console, indent: "  ").split(separator: "\n").map(String.init)
        lines.append("")
        lines += stageTable(detail.stages, running: job.state == .running, width: width)
        for attempt in history {
            let took = duration(from: attempt.startedAt, to: attempt.finishedAt, running: false)
            let why = attempt.error.map { ": " + text($0, room: width - 40) } ?? ""
            lines.append("earlier: attempt \(attempt.attempt) \(attempt.state.rawValue) after \(took)\(why)")
        }
        for event in events {
            let place = event.position.map { " (stage \($0 + 1))" } ?? ""
            lines.append(
                "event \(Formatting.timestamp(event.createdAt)) \(Self.safe(event.kind))\(place): "
                    + text(event.message, room: width - 50))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A scheduled job's line: the occurrence it is for, or, for a job
    /// fired outside the calendar, how and by whom.
    static func scheduled(_ instant: Date, _ firing: ScheduleFiring?) -> String {
        let at = Formatting.timestamp(instant)
        guard let firing else { return "for the occurrence at \(at)" }
        let by =
            (firing.actor.map { " by " + safe($0.description) } ?? "") + (firing.action.map { " (action \($0))" } ?? "")
        switch firing.trigger {
        case .manual: return "run by hand at \(at)\(by), outside the calendar"
        case .backfill: return "for the occurrence at \(at), fired by a backfill\(by)"
        }
    }

    func stageTable(_ stages: [Stage], running: Bool, width: Int) -> [String] {
        var table = Table(
            ["#", "STAGE", "KIND", "STATE", "TRIES", "TOOK", "VALUE / ERROR"],
            alignments: [.right, .left, .left, .left, .right, .right, .left])
        for stage in stages {
            table.add([
                Table.Cell(String(stage.position + 1)), Table.Cell(Self.safe(stage.name)),
                Table.Cell(Self.safe(stage.kind)),
                Table.Cell(stage.state.rawValue, Self.color(stage.state)), Table.Cell(String(stage.attempts)),
                Table.Cell(
                    duration(from: stage.startedAt, to: stage.finishedAt, running: running && stage.state == .running)),
                Table.Cell(""),
            ])
        }
        // The last column gets what the others leave of the terminal's width.
        let used = table.widths.dropLast().reduce(0, +) + 2 * (table.headers.count - 1) + 2
        for (index, stage) in stages.enumerated() {
            let room = width - used
            let shown: String
            if let error = stage.error {
                // The engine's error names the exit status itself.
                shown = text(error, room: room)
            } else {
                shown = value(stage.value, room: room)
            }
            table.rows[index][6] = Table.Cell(shown, stage.error == nil ? nil : .red)
        }
        return table.render(console, indent: "  ").split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// `list`'s table; with `waits`, a WAITING column says why each pending job waits.
    func listTable(_ jobs: [Job], waits: [Int64: WaitReason]? = nil) -> String {
        var headers = ["ID", "DEFINITION", "STATE", "ATTEMPT", "CREATED", "TOOK", "ERROR"]
        var alignments: [Table.Alignment] = [.right, .left, .left, .right, .left, .right, .left]
        if showsNode {
            headers.insert("NODE", at: 3)
            alignments.insert(.left, at: 3)
        }
        if waits != nil {
            headers.insert("WAITING", at: 3)
            alignments.insert(.left, at: 3)
        }
        var table = Table(headers, alignments: alignments)
        for job in jobs {
            var row = [
                Table.Cell(String(job.id)), Table.Cell(Self.safe(job.definition)),
                Table.Cell(job.state.rawValue, Self.color(job.state)), Table.Cell(String(job.attempt)),
                Table.Cell(Formatting.timestamp(job.createdAt)),
                Table.Cell(duration(from: job.startedAt, to: job.finishedAt, running: job.state == .running)),
                Table.Cell(""),
            ]
            if showsNode {
                row.insert(Table.Cell(job.leaseOwner.map { Self.safe(LeaseOwner.node(of: $0)) } ?? "-"), at: 3)
            }
            if let waits {
                row.insert(Table.Cell(waits[job.id].map { Self.safe($0.short) } ?? "-"), at: 3)
            }
            table.add(row)
        }
        let used = table.widths.dropLast().reduce(0, +) + 2 * (table.headers.count - 1)
        for (index, job) in jobs.enumerated() {
            table.rows[index][headers.count - 1] = Table.Cell(
                job.error.map { text($0, room: (console.width ?? 100) - used) } ?? "")
        }
        return table.render(console)
    }
}
