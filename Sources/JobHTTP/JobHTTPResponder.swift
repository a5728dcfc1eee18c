import Foundation
import Hummingbird
import JobDashboard
import Logging

/// Answers the listener's requests: `GET /metrics`, `GET /healthz`, and the
/// dashboard (`/`, `/jobs/{id}`, `/jobs/{id}/values/{name}`, `/schedules`),
/// for the visitors ``DashboardAccess`` lets in; `/login` and `POST /logout`;
/// operators' POSTs (`/jobs/{id}/{verb}`, `/actions`, `/pauses`).
/// HEAD is GET without the body.
///
/// Nothing else: another method gets 405, another path 404, a GET with
/// a body 413, a target over 4 KiB 414. No file is ever served.
struct JobHTTPResponder: HTTPResponder {
    typealias Context = ListenerRequestContext

    let dashboard: Dashboard
    /// The Prometheus exposition, made when `/metrics` is asked for.
    let exposition: @Sendable () async -> [UInt8]
    let access: DashboardAccess
    let logger: Logger
    /// The node's name, for the login pages' titles.
    let node: String

    static let maxTargetBytes = 4096

    func respond(to request: Request, context: Context) async throws -> Response {
        let response = await answer(request, peer: await context.peer(unix: access.unixListener))
        return request.method == .head ? response.createHeadResponse() : response
    }

    private func answer(_ request: Request, peer: DashboardAccess.Peer) async -> Response {
        let path = request.uri.path
        if let refusal = tokenRefusal(request, peer: peer) { return refusal }
        if request.method == .post, path == "/login" || path == "/logout" {
            return await accountAction(request, peer: peer)
        }
        if request.method == .post,
            path == "/actions" || path == "/schedules" || path == "/pauses" || Self.jobAction(path) != nil
        {
            return await operatorAction(request, peer: peer)
        }
        guard request.method == .get || request.method == .head else {
            var response = Self.text(.methodNotAllowed, "Only GET and HEAD are served here.\n")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        if await Self.hasBody(request) {
            return Self.text(.contentTooLarge, "A GET request has no body here.\n")
        }
        guard request.uri.string.utf8.count <= Self.maxTargetBytes else {
            return Self.text(.uriTooLong, "The request target is over \(Self.maxTargetBytes) bytes.\n")
        }
        var forms: ActionForms?
        switch path {
        case "/metrics", "/healthz":
            break
        case "/login":
            return loginPage(request, peer: peer)
        default:
            guard let visitor = access.visitor(request.head, peer: peer) else { return mustLogIn(request) }
            if visitor.role == .operate { forms = access.csrfToken(for: visitor, request.head).map(ActionForms.init) }
        }
        switch path {
        case "/metrics":
            return Response(
                status: .ok,
                headers: [
                    .contentType: PrometheusContentType.value, .xContentTypeOptions: "nosniff",
                    .cacheControl: "no-store",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: await exposition())))
        case "/healthz":
            return Self.text(.ok, "ok\n")
        case "/":
            return Self.page(await dashboard.jobsPage(query: QueryString.items(request.uri.query), forms: forms))
        case "/actions":
            guard let forms else { return Self.forbidden(node: node, "Only an operator may act on jobs.") }
            return Self.page(
                await dashboard.confirmationPage(query: QueryString.items(request.uri.query), forms: forms))
        case "/schedules":
            return Self.page(await dashboard.schedulesPage(forms: forms))
        default:
            let segments = path.split(separator: "/", omittingEmptySubsequences: false)
            if segments.count == 5, segments[0].isEmpty, segments[1] == "jobs", segments[3] == "values" {
                let value = await dashboard.value(id: String(segments[2]), name: String(segments[4]))
                return Response(
                    status: HTTPResponse.Status(code: value.status.rawValue),
                    headers: [
                        .contentType: value.contentType, .xContentTypeOptions: "nosniff", .cacheControl: "no-store",
                        .contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'",
                    ],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.body)))
            }
            if segments.count == 3, segments[0].isEmpty, segments[1] == "jobs", !segments[2].isEmpty {
                return Self.page(
                    await dashboard.jobPage(
                        id: String(segments[2]), query: QueryString.items(request.uri.query), forms: forms))
            }
            return Self.text(.notFound, "Not found. The dashboard is at /, the metrics at /metrics.\n")
        }
    }

    /// Whether the request came with a body, whatever its framing: the
    /// HTTP types hand on `Content-Length` but not `Transfer-Encoding`, so a
    /// chunked body is seen by its first bytes (the rest is drained).
    static func hasBody(_ request: Request) async -> Bool {
        if let length = request.headers[.contentLength].flatMap(Int.init) { return length > 0 }
        var body = request.body.makeAsyncIterator()
        while let chunk = try? await body.next() {
            if chunk.readableBytes > 0 { return true }
        }
        return false
    }

    static func page(_ page: DashboardPage) -> Response {
        Response(
            status: HTTPResponse.Status(code: page.status.rawValue),
            headers: [
                .contentType: "text/html; charset=utf-8",
                .contentSecurityPolicy: DashboardPage.contentSecurityPolicy + "; frame-ancestors 'none'",
                .xContentTypeOptions: "nosniff",
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: page.html)))
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/plain; charset=utf-8", .xContentTypeOptions: "nosniff", .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

enum PrometheusContentType {
    /// Prometheus text format 0.0.4 (JobMetrics' `PrometheusJobMetrics.contentType`).
    static let value = "text/plain; version=0.0.4; charset=utf-8"
}

/// `a=1&b=x+y%21` → `[("a", "1"), ("b", "x y!")]`. A pair whose
/// percent-encoding is broken keeps its raw text (the page then says the
/// value is not one it knows).
enum QueryString {
    static func items(_ query: String?) -> [(String, String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
