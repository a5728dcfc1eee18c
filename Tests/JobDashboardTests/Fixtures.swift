import Foundation

@testable import JobDashboard
@testable import JobStore

/// Fixed data for the pages, and the time they are rendered for.
let renderTime = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28 20:26:40Z

func makeJob(
    _ id: Int64, definition: String = "report", state: JobState = .fulfilled, input: Data? = nil, result: Data? = nil,
    error: String? = nil, attempt: Int = 1, startedAgo: Double? = 120, ranFor: Double? = 30
) -> Job {
    let started = startedAgo.map { renderTime.addingTimeInterval(-$0) }
    return Job(
        id: id, definition: definition, pool: "default", state: state, priority: 0, idempotencyKey: nil,
        input: input, result: result, error: error, attempt: attempt, cancelRequested: false, claims: attempt,
        leaseOwner: "web-1", leaseExpiresAt: nil, runAt: renderTime.addingTimeInterval(-200),
        createdAt: renderTime.addingTimeInterval(-200), startedAt: started,
        finishedAt: state.isResolved ? started.flatMap { start in ranFor.map { start.addingTimeInterval($0) } } : nil)
}

func makeStage(
    _ position: Int, name: String = "step", kind: String = "then", state: StageState = .fulfilled,
    value: Data? = nil, error: String? = nil, startedAgo: Double? = 100, ranFor: Double? = 10, attempts: Int = 1
) -> Stage {
    let started = startedAgo.map { renderTime.addingTimeInterval(-$0) }
    return Stage(
        jobID: 1, position: position, name: name, kind: kind, state: state, value: value, error: error,
        exitCode: state == .rejected ? 1 : 0, attempts: started == nil ? 0 : attempts, startedAt: started,
        finishedAt: ranFor.flatMap { duration in started.map { $0.addingTimeInterval(duration) } }, errorCode: nil)
}

let snapshot = DashboardSnapshot(
    pools: [PoolRow(name: "default", capacity: 16, running: 3)],
    schedules: [
        ScheduleRow(
            definition: "nightly", expression: "cron: 0 3 * * *", nextFire: renderTime.addingTimeInterval(3600),
            lastFired: renderTime.addingTimeInterval(-82_800), lastState: .fulfilled)
    ],
    build: BuildInfo(version: "1.0.0-test", node: "web-1", startedAt: renderTime.addingTimeInterval(-7200)),
    now: renderTime)

/// A data source over fixed values; `failing` makes every store read throw.
struct FixedSource: DashboardDataSource {
    var jobs: [Job] = []
    var details: [Int64: JobDetail] = [:]
    var history: [Int64: [JobAttempt]] = [:]
    var events: [Int64: [JobEvent]] = [:]
    var minutes: [ResolvedMinute] = []
    var pools: [PoolJobCounts] = []
    var schedules: [ScheduleRow]? = nil
    var unreadable: [UnreadableRow] = []
    var failing: (any Error)? = nil
    var logs: [StageLogEntry] = []
    var children: [Int64: [Job]] = [:]

    func check() throws { if let failing { throw failing } }

    func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        try check()
        return Array((children[parentID] ?? []).prefix(limit))
    }

    func list(_ query: JobQuery) async throws -> JobPage {
        try check()
        let matching = jobs.filter { job in
            (query.states?.contains(job.state) ?? true) && (query.definition.map { $0 == job.definition } ?? true)
                && job.id < (query.before ?? .max)
        }.sorted { $0.id > $1.id }
        let page = Array(matching.prefix(query.limit))
        return JobPage(
            jobs: page, nextCursor: matching.count > query.limit ? page.last?.id : nil, unreadable: unreadable)
    }

    /// As the stores search: every word in the input, result, error or key, case ignored.
    func search(_ text: String, _ query: JobQuery) async throws -> JobPage {
        try check()
        let words = SearchText.words(text)
        let found = jobs.filter { job in
            let held =
                [job.input, job.result].compactMap { $0.map { String(decoding: $0, as: UTF8.self) } }
                + [job.error, job.idempotencyKey].compactMap { $0 }
            let all = Set(held.flatMap { SearchText.words($0) })
            return !words.isEmpty && words.allSatisfy(all.contains)
        }
        return try await FixedSource(jobs: found, unreadable: unreadable).list(query)
    }

    func job(_ id: Int64) async throws -> JobDetail? {
        try check()
        return details[id]
    }

    /// As the stores read it: the range of stages, the events before the
    /// cursor, values cut to the query's characters (bytes when not text).
    func jobPage(_ query: JobPageQuery) async throws -> JobPageRead? {
        try check()
        guard var detail = details[query.id] else { return nil }
        var whole: [JobPageRead.ValuePlace: Int] = [:]
        func cut(_ data: Data?, _ place: JobPageRead.ValuePlace, limit: Int) -> Data? {
            guard let data else { return nil }
            let shown: Data
            if !data.contains(0), let text = String(data: data, encoding: .utf8) {
                shown = Data(String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit))).utf8)
            } else {
                shown = data.prefix(limit)
            }
            if shown.count < data.count { whole[place] = data.count }
            return shown
        }
        func cut(_ text: String?, _ place: JobPageRead.ValuePlace, limit: Int) -> String? {
            cut(text.map { Data($0.utf8) }, place, limit: limit).map { String(decoding: $0, as: UTF8.self) }
        }
        func stages(_ stages: [Stage], attempt: Int?) -> [Stage] {
            stages.filter { $0.position >= query.firstStage }.sorted { $0.position < $1.position }
                .prefix(query.stageLimit).map { stage in
                    var stage = stage
                    stage.value = cut(
                        stage.value, .stageValue(attempt: attempt, position: stage.position),
                        limit: query.valueCharacters)
                    stage.error = cut(
                        stage.error, .stageError(attempt: attempt, position: stage.position),
                        limit: query.valueCharacters)
                    return stage
                }
        }
        detail.job.input = cut(detail.job.input, .input, limit: query.valueCharacters)
        detail.job.result = cut(detail.job.result, .result, limit: query.valueCharacters)
        detail.job.error = cut(detail.job.error, .error, limit: query.valueCharacters)
        let attempts = history[query.id] ?? []
        let shownAttempts = attempts.suffix(query.attemptLimit).map { attempt in
            var attempt = attempt
            attempt.result = cut(attempt.result, .attemptResult(attempt.attempt), limit: query.valueCharacters)
            attempt.error = cut(attempt.error, .attemptError(attempt.attempt), limit: query.valueCharacters)
            attempt.stages = stages(attempt.stages, attempt: attempt.attempt)
            return attempt
        }
        let allEvents = events[query.id] ?? []
        let shownEvents = allEvents.filter { $0.id < (query.eventsBefore ?? .max) }.suffix(query.eventLimit)
        return JobPageRead(
            job: detail.job, stages: stages(detail.stages, attempt: nil), stageCount: detail.stages.count,
            history: Array(shownAttempts), attemptCount: attempts.count, events: Array(shownEvents),
            eventCount: allEvents.count, wholeBytes: whole)
    }

    func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data? {
        try check()
        guard let detail = details[id] else { return nil }
        switch place {
        case .input: return detail.job.input
        case .result: return detail.job.result
        case .error: return detail.job.error.map { Data($0.utf8) }
        case .stageValue(nil, let position): return detail.stages.first { $0.position == position }?.value
        case .stageError(nil, let position):
            return detail.stages.first { $0.position == position }?.error.map { Data($0.utf8) }
        default: return nil
        }
    }

    func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        try check()
        return Dictionary(
            uniqueKeysWithValues: states.map { state in (state, jobs.filter { $0.state == state }.count) })
    }

    func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        try check()
        return minutes
    }
    func jobCountsByPool() async throws -> [PoolJobCounts] {
        try check()
        return pools
    }
    func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry] {
        try check()
        return Array(logs.filter { $0.cursor.jobAttempt == query.jobAttempt }.prefix(query.limit))
    }

    func snapshot() async -> DashboardSnapshot {
        var copy = JobDashboardTests.snapshot
        if let schedules { copy.schedules = schedules }
        return copy
    }
}

/// Hostile values: markup, quotes, control and bidi characters.
enum Hostile {
    static let script = "<script>alert(1)</script>"
    static let attribute = "x\" onmouseover=\"alert(1)"
    static let controls = "bell\u{07}nul\u{00}esc\u{1B}[31mred\u{7F}c1\u{85}end"
    static let bidi = "invoice\u{202E}fdp.exe\u{2066}iso\u{2069}\u{200B}zw\u{FEFF}"
    static let invalidUTF8 =
        Data([0x6F, 0x6B, 0x20, 0xFF, 0xFE, 0x20, 0xC3, 0x28, 0x20]) + Data("still text here".utf8)
}

extension String {
    /// Scalars a page must never carry raw: controls other than newline and
    /// tab, and the format characters (bidi overrides and isolates, zero widths).
    var invisibleScalars: [Unicode.Scalar] {
        unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A, 0x09: false
            case 0x00...0x1F, 0x7F...0x9F, 0x200B, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069, 0xFEFF: true
            default: false
            }
        }
    }

    func occurrences(of needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}
