import FlapBoard
import FlapClock
import FlapCore
import FlapMessages
import FlapNet
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The Vestaboard-compatible local HTTP API of one board (or of one grid of boards, as one):
/// `POST /local-api/message` (codes, `{"characters"}` or `{"text"}`) → 201, and
/// `GET /local-api/message` → `{"message": [[codes]]}`, guarded by `X-Vestaboard-Local-Api-Key`
/// when a key is configured; also `GET /status`, `GET /metrics`, `POST /home`, the self-test
/// (`POST` and `GET /selftest`), live calibration
/// (`GET` and `POST /calibration`, `CalibrationRoutes`), saved boards (`/saved`, `SavedRoutes`), and the web page
/// (`WebRoutes`: the page at `/`, the live board at `/events`, previews, the quiet switch).
public enum LocalAPI {
    /// Largest body accepted; larger → 413.
    public static let maxBody = 64 * 1024
    /// The limits of its HTTP server (documented in the README's "Limits").
    public static var limits: LocalHTTPServer.Limits {
        var l = LocalHTTPServer.Limits()
        l.maxBody = maxBody
        return l
    }
    static let keyHeader = "X-Vestaboard-Local-Api-Key"
    static let enablementHeader = "X-Vestaboard-Local-Api-Enablement-Token"
    /// The paths it serves (the saved boards' apart: `SavedRoutes`), and the methods each
    /// takes: another method is 405 naming them in `Allow` (RFC 9110 §15.5.6), another path 404.
    static let methods: [String: [HTTPMethod]] = [
        "/status": [.GET], "/metrics": [.GET], "/home": [.POST], "/selftest": [.GET, .POST],
        "/local-api/message": [.GET, .POST], "/local-api/enablement": [.POST], CalibrationRoutes.path: [.GET, .POST],
        "/events": [.GET], "/local-api/preview": [.POST], "/quiet": [.POST],
    ].merging(WebRoutes.assets.mapValues { _ in [.GET] }) { own, _ in own }

    /// 405: `request`'s method is not one of `allow`, which the answer names.
    static func notAllowed(_ request: Request, allow: [HTTPMethod]) -> Response {
        var response = json(405, ["error": "\(request.method) is not allowed on \(request.path)"])
        response.headers.append(("Allow", allow.map(\.rawValue).joined(separator: ", ")))
        return response
    }
    typealias Request = LocalHTTPServer.Request
    typealias Response = LocalHTTPServer.Response

    /// Answers one request: refuses it without the configured key (compared in constant time)
    /// with 401 and the plain text `Invalid API key` (what Vestaboard answers, and what Home
    /// Assistant's integration compares), else routes it. The enablement takes its token instead.
    package static func handler(wall: Wall, mailroom: Mailroom, key: String?, enablementToken: String? = nil,
                        logger: Logger, status: DaemonStatus, feed: WebFeed? = nil, calibration: CalibrationSession? = nil,
                        saved: SavedBoards? = nil)
        -> @Sendable (LocalHTTPServer.Request) async -> LocalHTTPServer.Response {
        { request in
            if let asset = WebRoutes.asset(request) { return asset }
            if request.path == "/local-api/enablement" {
                return enablement(request, key: key, token: enablementToken, logger: logger)
            }
            if let key {
                guard let given = request.headers.first(name: keyHeader), constantTimeEqual(given, key) else {
                    return text(401, "Invalid API key")
                }
            }
            switch (request.method, request.path) {
            case (.GET, "/status"):
                guard let body = try? status.report().json() else { return json(500, ["error": "the status could not be written"]) }
                return Response(status: 200, contentType: "application/json", body: Array(body))
            case (.GET, "/metrics"):
                return Response(status: 200, contentType: "text/plain; version=0.0.4", body: Array(status.prometheus().utf8))
            case (.POST, "/home"):
                let boards = await BlockingWork.run { status.gpio.homeAll(on: wall.conductor) }  // reads calibration.json
                return boards.isEmpty ? json(409, ["error": "no board has home sensors (gpio.home)"]) : json(202, ["homing": boards])
            case (.POST, "/selftest"):
                let turning = await BlockingWork.run { status.gpio.selfTest(conductor: wall.conductor) }
                return turning == 0 ? json(409, ["error": "no module to turn: no stepper board on GPIO, or every module busy or faulty"])
                    : json(202, ["turning": turning])
            case (.GET, "/selftest"): return json(200, status.gpio.selfTestReport { wall.config.boards[$0].cols })
            case (_, CalibrationRoutes.path):
                guard let calibration else { return json(404, ["error": "no board has stepper modules on GPIO to calibrate"]) }
                return await CalibrationRoutes.handle(request, session: calibration)
            case (_, let path) where SavedRoutes.owns(path):
                guard let saved else { return json(404, ["error": "no saved boards here"]) }
                return await SavedRoutes.handle(request, saved: saved, mailroom: mailroom, wall: wall, logger: logger)
            case (.GET, "/events"):
                guard let feed else { return json(404, ["error": "no live board here (the web page's feed is off)"]) }
                return WebRoutes.events(feed: feed, wall: wall)
            case (.POST, "/local-api/preview"): return WebRoutes.preview(request, mailroom: mailroom, wall: wall)
            case (.POST, "/quiet"): return await WebRoutes.quiet(request, mailroom: mailroom)
            case (.GET, "/local-api/message"): return json(200, ["message": wall.localCodes()])
            case (.POST, "/local-api/message"): return await post(request, mailroom: mailroom, wall: wall, logger: logger)
            case (_, let path) where methods[path] != nil:
                return notAllowed(request, allow: methods[path]!)
            default: return json(404, ["error": "no such path: \(request.path)"])
            }
        }
    }

    /// Takes a message as the local sender's (`@local`): it goes the way of every message, into
    /// the inbox and onto the zones that take it — by default the whole board.
    static func post(_ request: Request, mailroom: Mailroom, wall: Wall, logger: Logger) async -> Response {
        guard !request.tooLarge else { return json(413, ["error": "body is larger than \(maxBody) bytes"]) }
        return answer(await accept(Data(buffer: request.body), mailroom: mailroom, wall: wall), mailroom: mailroom, wall: wall, logger: logger)
    }

    /// The answer to a message taken by `accept`: 201 with what the board is going to, 202 when
    /// it is kept for later (and why), or the refusal.
    static func answer(_ accepted: Result<Wall.Shown?, LocalAPIError>, mailroom: Mailroom, wall: Wall, logger: Logger) -> Response {
        let posted: Wall.Shown?
        switch accepted {
        case .failure(let e): return json(e.status, ["error": e.message])
        case .success(let shown): posted = shown
        }
        guard let shown = posted else {
            if mailroom.isCalibrating {
                logger.info("message kept for the end of calibration")
                return json(202, ["held": "calibration", "note": "kept; it shows when calibration ends"])
            }
            if mailroom.isQuietHolding {
                logger.info("message kept for the end of the quiet hours")
                return json(202, LocalReply.Held(until: mailroom.quietUntil))
            }
            if mailroom.isStopped {
                return json(503, ["error": "flapd is stopping; the message is kept and shows after the restart"])
            }
            logger.warning("message kept but not shown: no zone takes the local sender (@local)")
            return json(202, ["note": "kept, but no zone takes the local sender (@local)"])
        }
        logger.info("message accepted", metadata: [
            "transition": "\(shown.transition.number)", "flips": "\(shown.transition.plan.flipCount)"])
        return json(201, LocalReply.Accepted(message: wall.config.localGrid == nil ? shown.frame.codes : wall.localCodes(),
                                             transition: shown.transition.number, flips: shown.transition.plan.flipCount,
                                             cut: shown.cut.isEmpty ? nil : shown.cut,
                                             substitutions: shown.substitutions.isEmpty ? nil : shown.substitutions.map(\.description)))
    }

    /// A local API body (codes, `characters`, `text` or VBML, with its transition, `arriveAt`,
    /// `duration`, `forced`), checked on the local board's size and taken into the inbox as the
    /// local sender's: what the board is going to (nil: kept, not shown now — quiet hours, no
    /// zone, stopping). Every door that takes such a body (HTTP, MQTT) takes it here.
    package static func accept(_ body: Data, mailroom: Mailroom, wall: Wall) async -> Result<Wall.Shown?, LocalAPIError> {
        let b = wall.config.localSize
        let post: LocalPost
        switch LocalPost.parse(body) {
        case .failure(let e): return .failure(e)
        case .success(let p): post = p
        }
        let how = (transition: post.transition.isEmpty ? nil : post.transition, arriveAt: post.arriveAt)
        let content: (text: String, type: InboxMessage.ContentType)
        switch inboxContent(post.message, rows: b.rows, cols: b.cols) {
        case .failure(let e): return .failure(e)
        case .success(let c): content = c
        }
        // Saves the inbox first.
        return .success(await mailroom.post(content.text, type: content.type, how: how, duration: post.duration, forced: post.forced))
    }

    /// A local message as the inbox keeps it — text, a pattern's codes, a VBML document — once
    /// checked against the size it is for (codes fit it, the document renders on it).
    static func inboxContent(_ message: LocalMessage, rows: Int, cols: Int) -> Result<(text: String, type: InboxMessage.ContentType), LocalAPIError> {
        switch message {
        case .text(let text): return .success((text, .text))
        case .codes(let codes):
            do throws(FrameError) { _ = try Frame(codes: codes, rows: rows, cols: cols) } catch { return .failure(.badRequest(error.description)) }
            return .success((PatternCodes.text(codes), .pattern))
        case .vbml(let document):
            do throws(VBMLDocument.Problem) { _ = try VBML.render(document, rows: rows, cols: cols) } catch {
                return .failure(.badRequest("VBML: \(error.description)"))
            }
            return .success((document.json(), .vbml))
        }
    }

    /// `POST /local-api/enablement`: with the configured token, the key — `{"message": "Local API
    /// enabled", "apiKey": …}` — as a Vestaboard answers a client's first run.
    static func enablement(_ request: Request, key: String?, token: String?, logger: Logger) -> Response {
        guard request.method == .POST else { return notAllowed(request, allow: [.POST]) }
        guard let token, let key else {
            return json(404, ["error": "enablement is not configured (local_api.enablement_token); the key is in flapd's config"])
        }
        guard let given = request.headers.first(name: enablementHeader), constantTimeEqual(given, token) else {
            logger.warning("local API enablement refused: missing or wrong \(enablementHeader)")
            return text(401, "Invalid enablement token")
        }
        logger.notice("local API enabled for a client (the key was handed out)")
        return json(200, ["message": "Local API enabled", "apiKey": key])
    }

    static func text(_ status: Int, _ body: String) -> Response {
        Response(status: status, contentType: "text/plain; charset=utf-8", body: Array(body.utf8))
    }

    static func json<T: Encodable>(_ status: Int, _ reply: T) -> Response {
        Response(status: status, contentType: "application/json", body: Array(SortedJSON.data(encoding: reply)))
    }

    /// Compares two strings in time that depends only on their lengths, not on where they differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) {
            diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return diff == 0
    }
}
