import Dispatch
import Foundation
import JobStore

/// The dashboard's pages, rendered from a ``DashboardDataSource``.
/// HTTP-agnostic: the listener maps paths to these calls and a
/// ``DashboardPage``'s status to its response.
///
/// Read-only: no page changes anything. Every value shown is user data and
/// is escaped, made visible and cut as docs/dashboard.md says.
public struct Dashboard: Sendable {
    public let source: any DashboardDataSource
    /// Where pages are rendered: one at a time, on a thread of this queue,
    /// never on Swift's cooperative pool. Rendering a job of many large
    /// values is seconds of CPU; on the pool (as many threads as cores) a
    /// few such pages would hold up every request of the listener,
    /// `/metrics` and `/healthz` among them.
    let renderQueue: DispatchQueue

    /// - Parameter renderQueue: a serial queue of this dashboard's own unless given.
    public init(
        source: any DashboardDataSource,
        renderQueue: DispatchQueue = DispatchQueue(label: "jobd.dashboard.render", qos: .utility)
    ) {
        self.source = source
        self.renderQueue = renderQueue
    }

    /// `render()`'s HTML, made on ``renderQueue``.
    private func rendered(_ render: @escaping @Sendable () -> HTML) async -> String {
        await withCheckedContinuation { continuation in
            renderQueue.async { continuation.resume(returning: render().rendered) }
        }
    }

    /// `/`: counts, pools, the chart, and a page of jobs. `query` is the
    /// request's percent-decoded query items (see ``JobListRequest``).
    public func jobsPage(query: [(String, String)]) async -> DashboardPage {
        let snapshot = await source.snapshot()
        let request: JobListRequest
        do {
            request = try JobListRequest(query: query)
        } catch {
            return .problem(.badRequest, "Bad request", error.message, snapshot: snapshot)
        }
        do {
            let window = ResolvedChart.window(now: snapshot.now)
            async let page = source.list(request.jobQuery)
            async let counts = source.countJobs(in: Set(JobState.allCases))
            async let pools = source.jobCountsByPool()
            async let resolved = source.resolvedPerMinute(from: window.start, to: window.end)
            let data = try await JobListPage.Data(
                request: request, page: page, counts: counts, poolCounts: pools, resolved: resolved, snapshot: snapshot)
            return DashboardPage(status: .ok, html: await rendered { JobListPage.render(data) })
        } catch {
            return .storeFailed(error, snapshot: snapshot)
        }
    }

    /// `/jobs/{id}`; `id` is the path's last segment, as sent.
    public func jobPage(id text: String) async -> DashboardPage {
        let snapshot = await source.snapshot()
        // Digits as jobctl prints ids: no sign, no leading zero.
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), !text.hasPrefix("0"), let id = Int64(text), id > 0 else {
            return .problem(.notFound, "No such job", "'\(text)' is not a job id.", snapshot: snapshot, base: "../")
        }
        do {
            guard let detail = try await source.job(id) else {
                return .problem(
                    .notFound, "No such job", "There is no job \(id) (it may have been pruned).",
                    snapshot: snapshot, base: "../")
            }
            async let history = source.attemptHistory(of: id)
            async let events = source.events(of: id)
            let data = try await JobDetailPage.Data(detail: detail, history: history, events: events, snapshot: snapshot)
            return DashboardPage(status: .ok, html: await rendered { JobDetailPage.render(data) })
        } catch {
            return .storeFailed(error, snapshot: snapshot, base: "../")
        }
    }

    /// `/schedules`.
    public func schedulesPage() async -> DashboardPage {
        let snapshot = await source.snapshot()
        return DashboardPage(status: .ok, html: await rendered { SchedulesPage.render(snapshot) })
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
