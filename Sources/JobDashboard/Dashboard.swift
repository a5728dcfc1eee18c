import Dispatch
import Foundation
import JobStore
import Synchronization

/// The dashboard's pages, rendered from a ``DashboardDataSource``.
/// HTTP-agnostic: the listener maps paths to these calls and a
/// ``DashboardPage``'s status to its response.
///
/// Read-only: no page changes anything. Every value shown is user data and
/// is escaped, made visible and cut as docs/dashboard.md says.
public struct Dashboard: Sendable {
    public let source: any DashboardDataSource
    /// What operators' forms do; nil: the pages show no forms and nothing can be changed.
    public let actions: DashboardActions?
    /// Where pages are rendered: on threads of this queue, never on Swift's
    /// cooperative pool, where a few pages being rendered would hold up
    /// every request of the listener, `/metrics` and `/healthz` among them.
    let renderQueue: DispatchQueue
    /// Pages made at once (reads and rendering), and how many may wait.
    let gate: RenderGate

    /// Pages made at once by default: one per core of a small server.
    public static let concurrentPages = 2
    /// Page requests that may wait for a turn; more are answered 503 at once.
    public static let waitingPages = 16

    /// - Parameters:
    ///   - renderQueue: a concurrent queue of this dashboard's own unless given.
    ///   - concurrentPages: pages made at once; `waitingPages`: how many may wait.
    ///   - releaseIdleMemory: called once no page has been made for a
    ///     couple of seconds, on a Dispatch thread it may block (jobd: the
    ///     store's `releaseIdleMemory()`).
    public init(
        source: any DashboardDataSource,
        renderQueue: DispatchQueue = DispatchQueue(
            label: "jobd.dashboard.render", qos: .utility, attributes: .concurrent),
        concurrentPages: Int = Dashboard.concurrentPages, waitingPages: Int = Dashboard.waitingPages,
        actions: DashboardActions? = nil,
        releaseIdleMemory: @escaping @Sendable () -> Void = {}
    ) {
        self.source = source
        self.actions = actions
        self.renderQueue = renderQueue
        // A page's reads and rendering allocate megabytes on whichever
        // threads made it; glibc keeps what they freed in its per-thread
        // arenas, and the store's read connections keep the pages they read
        // in their caches. Handing both back once no page is being made
        // lets jobd's memory return to where it was before a burst of pages:
        // glibc's at once, the store's after a quiet spell, so that a user
        // paging through the dashboard does not empty the caches each time.
        self.gate = RenderGate(
            concurrency: concurrentPages, queueLimit: waitingPages,
            onIdle: { MemoryTrim.releaseFreeMemory() },
            onSettled: {
                releaseIdleMemory()
                MemoryTrim.releaseFreeMemory()
            })
    }

    /// Stops making pages: requests waiting for a turn, and later ones, are
    /// answered 503 at once; pages being made finish. jobd calls it at its
    /// first SIGTERM, so that its stop waits for no queue of pages.
    public func stop() {
        gate.stop()
    }

    /// `make()` when the gate gives a turn; else a 503 that says why.
    /// ``gated(_:)`` for the pages of other files.
    func gatedPage(_ make: () async -> DashboardPage) async -> DashboardPage {
        await gated(make)
    }

    private func gated(_ make: () async -> DashboardPage) async -> DashboardPage {
        await gate.run(make) { turn in
            let detail =
                switch turn {
                case .stopping: "jobd is stopping."
                default: "\(gate.concurrency) pages are being made and \(gate.queueLimit) more wait; retry in a moment."
                }
            return DashboardPage(
                status: .unavailable,
                html:
                    "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Busy · jobd</title><p>\(detail)</p></html>"
            )
        }
    }

    /// `render()`'s HTML, made on ``renderQueue``; nil when the request's
    /// task is cancelled first (the listener stops): the rendering then
    /// finishes unseen.
    private func rendered(_ render: @escaping @Sendable () -> HTML) async -> String? {
        let once = Mutex<CheckedContinuation<String?, Never>?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                once.withLock { $0 = continuation }
                if Task.isCancelled {
                    once.withLock { $0.take() }?.resume(returning: nil)
                    return
                }
                renderQueue.async {
                    let html = render().rendered
                    once.withLock { $0.take() }?.resume(returning: html)
                }
            }
        } onCancel: {
            once.withLock { $0.take() }?.resume(returning: nil)
        }
    }

    private static func page(_ html: String?) -> DashboardPage {
        guard let html else { return DashboardPage(status: .unavailable, html: "jobd is stopping.") }
        return DashboardPage(status: .ok, html: html)
    }

    /// `/`: counts, pools, the chart, and a page of jobs. `query` is the
    /// request's percent-decoded query items (see ``JobListRequest``).
    /// `forms`: the visitor operates; the list offers actions on its selection.
    public func jobsPage(query: [(String, String)], forms: ActionForms? = nil) async -> DashboardPage {
        await gated { await makeJobsPage(query: query, forms: actions == nil ? nil : forms) }
    }

    private func makeJobsPage(query: [(String, String)], forms: ActionForms?) async -> DashboardPage {
        let snapshot = await source.snapshot()
        let request: JobListRequest
        do {
            request = try JobListRequest(query: query)
        } catch {
            return .problem(.badRequest, "Bad request", error.message, snapshot: snapshot)
        }
        do {
            let window = ResolvedChart.window(now: snapshot.now)
            async let counts = source.countJobs(in: Set(JobState.allCases))
            async let pools = source.jobCountsByPool()
            async let resolved = source.resolvedPerMinute(from: window.start, to: window.end)
            async let pauses = source.pauses()
            let page = try await jobs(request, now: snapshot.now)
            let waits = try await source.waitReasons(of: page.jobs.filter { $0.state == .pending }.map(\.id))
            let data = try await JobListPage.Data(
                request: request, page: page, counts: counts, poolCounts: pools, resolved: resolved, snapshot: snapshot,
                forms: forms, waits: waits, pauses: pauses)
            return Self.page(await rendered { JobListPage.render(data) })
        } catch {
            return .storeFailed(error, snapshot: snapshot)
        }
    }

    /// The list's page of jobs: from the search index when the request searches.
    private func jobs(_ request: JobListRequest, now: Date) async throws -> JobPage {
        let query = request.jobQuery(now: now)
        guard let match = request.match else { return try await source.list(query) }
        return try await source.search(match, query)
    }

    /// `/jobs/{id}`; `id` is the path's last segment, as sent. `query`:
    /// `stage=N`, the first stage position shown (a page shows
    /// ``JobDetailPage/stagesPerPage``), and `events-before=ID`, the cursor
    /// of the page of older events.
    public func jobPage(
        id text: String, query: [(String, String)] = [], forms: ActionForms? = nil
    ) async -> DashboardPage {
        await gated { await makeJobPage(id: text, query: query, forms: actions == nil ? nil : forms) }
    }

    private func makeJobPage(
        id text: String, query items: [(String, String)], forms: ActionForms?
    ) async -> DashboardPage {
        let snapshot = await source.snapshot()
        // Digits as jobctl prints ids: no sign, no leading zero.
        guard let id = Self.positiveNumber(text) else {
            return .problem(.notFound, "No such job", "'\(text)' is not a job id.", snapshot: snapshot, base: "../")
        }
        var query = JobDetailPage.query(id: id)
        for (name, value) in items {
            switch name {
            case "stage":
                guard let first = value == "0" ? 0 : Self.positiveNumber(value), first <= Int.max / 2 else {
                    return .problem(
                        .badRequest, "Bad request", "stage must be a stage position (0, 1, …), not '\(value)'.",
                        snapshot: snapshot, base: "../")
                }
                query.firstStage = Int(first)
            case "events-before":
                guard let before = Self.positiveNumber(value) else {
                    return .problem(
                        .badRequest, "Bad request", "events-before must be an event id, not '\(value)'.",
                        snapshot: snapshot, base: "../")
                }
                query.eventsBefore = before
            default:
                continue
            }
        }
        do {
            guard let read = try await source.jobPage(query) else {
                return .problem(
                    .notFound, "No such job", "There is no job \(id) (it may have been pruned).",
                    snapshot: snapshot, base: "../")
            }
            let shown = Set(read.stages.map(\.position))
            let log = try await source.stageLog(
                StageLogQuery(
                    jobID: id, jobAttempt: read.job.attempt, limit: JobDetailPage.logLines + 1))
            let children = try await source.children(of: id, limit: JobDetailPage.childrenRead)
            let wait = read.job.state == .pending ? try await source.waitReasons(of: [id])[id] : nil
            let data = JobDetailPage.Data(
                read: read, query: query, snapshot: snapshot,
                log: log.filter { shown.contains($0.cursor.position) }, forms: forms, children: children, wait: wait)
            return Self.page(await rendered { JobDetailPage.render(data) })
        } catch {
            return .storeFailed(error, snapshot: snapshot, base: "../")
        }
    }

    /// `/jobs/{id}/values/{name}`: one whole value or error of a job, the
    /// target of the link under a cut one (``JobPageRead/ValuePlace/name``).
    /// Text as `text/plain`, anything else as `application/octet-stream`;
    /// made in turn with the pages.
    public func value(id text: String, name: String) async -> DashboardValue {
        await gate.run({
            guard let id = Self.positiveNumber(text), let place = JobPageRead.ValuePlace(name: name) else {
                return .text(.notFound, "No such value: '\(name)' of job '\(text)'.\n")
            }
            do {
                guard let data = try await source.jobValue(id, place) else {
                    return .text(.notFound, "Job \(id) has no \(name) (the job may have been pruned).\n")
                }
                let hasNUL = data.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
                }
                let isText = !hasNUL && String(data: data, encoding: .utf8) != nil
                return DashboardValue(
                    status: .ok, contentType: isText ? "text/plain; charset=utf-8" : "application/octet-stream",
                    body: data)
            } catch {
                return .text(.unavailable, "The job store could not be read: \(error)\n")
            }
        }) { turn in
            switch turn {
            case .stopping: .text(.unavailable, "jobd is stopping.\n")
            default:
                .text(
                    .unavailable,
                    "\(gate.concurrency) pages are being made and \(gate.queueLimit) more wait; retry in a moment.\n")
            }
        }
    }

    /// Digits as jobctl prints ids: no sign, no leading zero, above 0.
    static func positiveNumber(_ text: String) -> Int64? {
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), !text.hasPrefix("0"), let number = Int64(text),
            number > 0
        else { return nil }
        return number
    }

    /// `/schedules`; `forms`: the visitor operates, and each schedule has its buttons.
    public func schedulesPage(forms: ActionForms? = nil) async -> DashboardPage {
        let forms = actions == nil ? nil : forms
        return await gated {
            let snapshot = await source.snapshot()
            return Self.page(await rendered { SchedulesPage.render(snapshot, forms: forms) })
        }
    }
}

/// A job's value as it is sent: its bytes, their type, the HTTP status.
public struct DashboardValue: Sendable {
    public var status: DashboardPage.Status
    public var contentType: String
    public var body: Data

    static func text(_ status: DashboardPage.Status, _ text: String) -> DashboardValue {
        DashboardValue(status: status, contentType: "text/plain; charset=utf-8", body: Data(text.utf8))
    }
}

/// A rendered page and the HTTP status to send it with.
public struct DashboardPage: Sendable {
    public enum Status: Int, Sendable {
        case ok = 200
        case badRequest = 400
        case notFound = 404
        /// The store could not be read.
        case unavailable = 503
    }

    public var status: Status
    /// A whole HTML document, UTF-8.
    public var html: String

    public init(status: Status, html: String) {
        self.status = status
        self.html = html
    }

    /// The `Content-Security-Policy` to send with every page: no script.
    public static let contentSecurityPolicy = Layout.contentSecurityPolicy

    static func problem(
        _ status: Status, _ heading: String, _ detail: String, snapshot: DashboardSnapshot, base: String = ""
    ) -> DashboardPage {
        let html = Layout.page(
            title: heading, section: .none, base: base, snapshot: snapshot, body: Layout.problem(heading, detail))
        return DashboardPage(status: status, html: html.rendered)
    }

    static func storeFailed(_ error: any Error, snapshot: DashboardSnapshot, base: String = "") -> DashboardPage {
        problem(.unavailable, "The job store could not be read", "\(error)", snapshot: snapshot, base: base)
    }
}
