import Foundation
import JobCalendar
import JobValues
internal import Yams

extension JobFileParser {
    static let scheduleKeys = ["cron", "calendar", "every", "timezone", "catch-up", "overlap", "jitter", "input"]

    /// `schedule:` — one mapping, or a list of them.
    mutating func parseSchedules(_ node: Node) -> [ScheduleDefinition]? {
        let items: [Node]
        if case .sequence = node {
            guard let list = reader.sequence(node, "'schedule'") else { return nil }
            items = list
        } else {
            items = [node]
        }
        var schedules: [ScheduleDefinition] = []
        var valid = true
        for item in items {
            if let schedule = parseSchedule(item) { schedules.append(schedule) } else { valid = false }
        }
        guard valid else { return nil }
        schedules = collapsingCopies(schedules)
        guard schedules.count <= ScheduleDefinition.maxPerDefinition else {
            reader.error(
                .tooManySchedules, at: node,
                "\(schedules.count) different schedules in one definition, over the \(ScheduleDefinition.maxPerDefinition) "
                    + "jobd fires for one: each is tracked and fired on its own; split them over definitions, "
                    + "or write one expression that covers them (a list in a calendar or cron field)")
            return nil
        }
        return schedules
    }

    /// `schedules` without the copies of an earlier one (the same
    /// expression, zone and options — YAML aliases make them cheaply), with
    /// one warning that counts them: a copy would fire the same occurrence
    /// again, which the database turns into no job, at the cost of a
    /// search and a transaction each time.
    private mutating func collapsingCopies(_ schedules: [ScheduleDefinition]) -> [ScheduleDefinition] {
        var kept: [ScheduleDefinition] = []
        var seen: [ScheduleDefinition: Int] = [:]
        var copies: [(first: ScheduleDefinition, copy: SourcePosition)] = []  // the kept schedule, the copy's place
        for schedule in schedules {
            var unplaced = schedule
            unplaced.sourcePosition = .file("")
            if let index = seen[unplaced] {
                copies.append((kept[index], schedule.sourcePosition))
            } else {
                seen[unplaced] = kept.count
                kept.append(schedule)
            }
        }
        if let (first, copy) = copies.first {
            let times = copies.filter { $0.first == first }.count + 1
            let others = copies.count + 1 - times
            reader.warning(
                .duplicateSchedule, at: copy,
                "schedule \(NodeReader.excerpt(first.key, limit: 64)) is listed \(times) times in this definition "
                    + "with the same options (copies, or YAML aliases of one)"
                    + (others > 0 ? ", and other schedules \(others) more times" : "")
                    + ": jobd fires each schedule once; remove the copies")
        }
        return kept
    }

    private mutating func parseSchedule(_ node: Node) -> ScheduleDefinition? {
        let what = "a schedule"
        guard let entries = reader.entries(of: node, what) else { return nil }
        var valid = true
        var expressions: [(kind: ScheduleKind, entry: NodeReader.Entry)] = []
        var zoneEntry: NodeReader.Entry?
        var schedule = ScheduleDefinition(expression: .every(.seconds(60)), sourcePosition: reader.position(of: node))
        for entry in entries {
            switch entry.key {
            case "cron", "calendar", "every":
                expressions.append((ScheduleKind(rawValue: entry.key)!, entry))
            case "timezone":
                zoneEntry = entry
                guard let name = reader.string(entry.value, "'timezone' of \(what)") else {
                    valid = false
                    continue
                }
                switch ScheduleTimeZone.lookup(name) {
                case let .success(zone):
                    schedule.timeZone = zone
                case let .failure(error):
                    reader.error(
                        .badSchedule, at: entry.value,
                        "unknown time zone '\(NodeReader.excerpt(name))': \(error.reason); use a name of the tz database, "
                            + "e.g. Europe/Berlin or UTC")
                    valid = false
                }
            case "catch-up":
                if let value: ScheduleDefinition.CatchUp = choice(entry, what) {
                    schedule.catchUp = value
                } else {
                    valid = false
                }
            case "overlap":
                if let value: ScheduleDefinition.Overlap = choice(entry, what) {
                    schedule.overlap = value
                } else {
                    valid = false
                }
            case "jitter":
                if let jitter = reader.duration(entry.value, "'jitter' of \(what)", allowZero: true) {
                    schedule.jitter = jitter
                } else {
                    valid = false
                }
            case "input":
                guard let input = reader.string(entry.value, "'input' of \(what)") else {
                    valid = false
                    continue
                }
                schedule.input = Data(input.utf8)
                if schedule.input.count > context.valueCap {
                    // Its jobs could never be stored: refused here, not at every occurrence.
                    reader.error(
                        .invalidValue, at: entry.value,
                        "the input is \(schedule.input.count) bytes, over store.value-cap "
                            + "(\(ByteSize(bytes: context.valueCap)) in jobd.yaml): its jobs could not be stored; "
                            + "shorten it (pass a file's path instead) or raise store.value-cap")
                    valid = false
                }
            default:
                reader.unknownKey(entry, in: what, known: Self.scheduleKeys)
                valid = false
            }
        }
        guard expressions.count == 1, let (kind, entry) = expressions.first else {
            let found = expressions.map { "'\($0.kind)'" }.joined(separator: " and ")
            reader.error(
                expressions.isEmpty ? .missingKey : .invalidValue, at: node,
                "\(what) has exactly one of 'cron', 'calendar' and 'every'"
                    + (expressions.isEmpty ? "" : ", found \(found)"))
            return nil
        }
        guard let text = reader.string(entry.value, "'\(kind)' of \(what)") else { return nil }
        do {
            schedule.expression = try ScheduleExpression.parse(kind: kind, text: text)
        } catch {
            // Point at the column of the expression where the problem is.
            var position = reader.position(of: entry.value)
            if case let .scalar(scalar) = entry.value, position.line > 0 {
                let quoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
                position.column += error.column + (quoted ? 1 : 0)
            }
            reader.error(
                .badSchedule, at: position,
                "invalid \(kind) expression \"\(NodeReader.excerpt(text, limit: 64))\": \(error.message)")
            return nil
        }
        if let zoneEntry, schedule.timeZone != nil, !schedule.expression.readsDefaultZone {
            let reason = kind == .every ? "every: counts from 1970 in UTC" : "the expression names its own zone"
            reader.warning(
                .invalidValue, at: zoneEntry.value,
                "timezone: has no effect here (\(reason)); remove it — it is part of the schedule's key, "
                    + "so adding or removing it later starts the schedule anew")
        }
        // The zone hardly matters here: a date that never comes, or is past, is so in any.
        if schedule.expression.next(after: Date(), in: schedule.zone(host: TimeZone(identifier: "UTC") ?? .current))
            == nil
        {
            reader.warning(
                .scheduleNeverFires, at: entry.value,
                "\(kind) expression \"\(NodeReader.excerpt(text, limit: 64))\" has no occurrence after now "
                    + "(a date that never comes, or one past): this schedule never fires; "
                    + "jobctl calendar --\(kind) '…' shows its times")
        }
        return valid ? schedule : nil
    }

    /// One of `Choice`'s raw values, or nil (reported).
    private mutating func choice<Choice: RawRepresentable & CaseIterable>(
        _ entry: NodeReader.Entry, _ what: String
    ) -> Choice? where Choice.RawValue == String {
        guard let text = reader.string(entry.value, "'\(entry.key)' of \(what)") else { return nil }
        if let value = Choice(rawValue: text) { return value }
        let known = Choice.allCases.map(\.rawValue).joined(separator: ", ")
        reader.error(
            .invalidValue, at: entry.value, "unknown \(entry.key) '\(NodeReader.excerpt(text))'; use one of \(known)")
        return nil
    }
}
