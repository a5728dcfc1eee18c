import Foundation
import Hummingbird
import JobDashboard
import Logging

/// Operators' POSTs: `/jobs/{id}/{retry|cancel|delete}`, `/actions` (a list's whole selection),
/// `/schedules` (run now, pause, resume a schedule) and `/pauses` (pause or resume a pool or a
/// definition).
///
/// Each is refused with 403, and nothing changed, unless it comes from a
/// page of this dashboard (`Origin`, else `Referer`), from a visitor whose
/// role is `operate`, with the CSRF token that visitor's pages carry — or
/// from a script with an `operate` token (`Authorization: Bearer`), which
/// needs neither: a browser never adds that header to a forged form, and
/// a cross-site script cannot send it without a CORS grant, which jobd
/// never gives.
extension JobHTTPResponder {
    /// `/jobs/{id}/{verb}` → (id, verb).
    static func jobAction(_ path: String) -> (id: String, verb: String)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 4, segments[0].isEmpty, segments[1] == "jobs", !segments[2].isEmpty,
            ["retry", "cancel", "delete"].contains(segments[3])
        else { return nil }
        return (String(segments[2]), String(segments[3]))
    }

    func operatorAction(_ request: Request, peer: DashboardAccess.Peer) async -> Response {
        let visitor = access.visitor(request.head, peer: peer)
        let script = visitor?.way == .token
        guard script || Self.sameOrigin(request) else {
            return Self.forbidden(node: node, "This form was sent from another site.")
        }
        guard let visitor else {
            return Self.forbidden(node: node, "Log in first.")
        }
        guard visitor.role == .operate else {
            return Self.forbidden(node: node, "Only an operator may act on jobs, pools and definitions.")
        }
        guard let form = await Self.form(request) else {
            return Self.html(
                .contentTooLarge,
                AccessPages.refusal(
                    node: node, heading: "Too large", detail: "A form here holds at most \(Self.maxFormBytes) bytes."))
        }
        if !script {
            guard let expected = access.csrfToken(for: visitor, request.head), let sent = form["csrf"],
                PasswordHash.constantTimeEqual(Array(sent.utf8), Array(expected.utf8))
            else {
                return Self.forbidden(node: node, "The form is stale or forged: reload the page and try again.")
            }
        }
        let name = visitor.name ?? "anonymous"
        let uid = peer.credentials.map { Int($0.uid) }
        let origin = (script ? "dashboard token from " : "dashboard from ") + visitor.origin
        let outcome: ActionOutcome
        if let (id, verb) = Self.jobAction(request.uri.path) {
            outcome = await dashboard.act(onJob: id, verb: verb, name: name, uid: uid, origin: origin)
        } else if request.uri.path == "/schedules" {
            let fields = form.map { ($0.key, $0.value) }
            outcome = await dashboard.act(onSchedule: fields, name: name, uid: uid, origin: origin)
        } else if request.uri.path == "/pauses" {
            outcome = await dashboard.act(
                onPause: form.map { ($0.key, $0.value) }, name: name, uid: uid, origin: origin)
        } else {
            let fields = form.map { ($0.key, $0.value) }
            outcome = await dashboard.act(onSelection: fields, name: name, uid: uid, origin: origin)
        }
        switch outcome {
        case .done(let location, let summary):
            logger.info("http: \(Self.loggable(name)) \(summary) from \(visitor.origin)")
            var response = Response(status: .seeOther, headers: [.cacheControl: "no-store"])
            response.headers[.location] = location
            return response
        case .refused(let status, let message):
            return Self.html(
                HTTPResponse.Status(code: status),
                AccessPages.refusal(node: node, heading: "Nothing was changed", detail: message))
        }
    }

    static func forbidden(node: String, _ detail: String) -> Response {
        html(
            .forbidden, AccessPages.refusal(node: node, heading: "Forbidden", detail: detail + " Nothing was changed."))
    }
}
