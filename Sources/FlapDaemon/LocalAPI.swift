import FlapCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationCompat
import Logging

/// The Vestaboard-compatible local HTTP API of one board:
/// `POST /local-api/message` (codes, `{"characters"}` or `{"text"}`) → 201, and
/// `GET /local-api/message` → `{"message": [[codes]]}`, guarded by `X-Vestaboard-Local-Api-Key`
/// when a key is configured.
public enum LocalAPI {
    /// Largest body accepted; larger → 413.
    public static let maxBody = 64 * 1024
    static let keyHeader = HTTPField.Name("X-Vestaboard-Local-Api-Key")!

    public static func router(wall: Wall, board: Int, key: String?, status: DaemonStatus) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: KeyCheck(key: key))
        router.get("/status") { _, _ in json(200, status.json()) }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: .init(byteBuffer: ByteBuffer(string: status.prometheus())))
        }
        router.post("/home") { _, _ in
            let boards = status.gpio.homeAll()
            return json(boards.isEmpty ? 409 : 202, boards.isEmpty ? ["error": "no board has home sensors (gpio.home)"] : ["homing": boards])
        }
        router.get("/local-api/message") { _, _ in
            json(200, ["message": wall.target(board: board).codes])
        }
        router.post("/local-api/message") { request, context in
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: maxBody) } catch {
                return json(413, ["error": "body is larger than \(maxBody) bytes"])
            }
            let message: LocalMessage
            switch LocalMessage.parse(Data(buffer: body)) {
            case .failure(let e): return json(e.status, ["error": e.message])
            case .success(let m): message = m
            }
            let shown: Wall.Shown
            switch message {
            case .text(let text):
                shown = wall.show(text: text, board: board)
            case .codes(let codes):
                do throws(FrameError) { shown = try wall.show(codes: codes, board: board) } catch {
                    return json(400, ["error": error.description])
                }
            }
            context.logger.info("message accepted", metadata: [
                "transition": "\(shown.transition.number)", "flips": "\(shown.transition.plan.flipCount)"])
            var reply: [String: Any] = ["message": shown.frame.codes, "transition": shown.transition.number,
                                        "flips": shown.transition.plan.flipCount]
            if !shown.cut.isEmpty { reply["cut"] = shown.cut }
            if !shown.substitutions.isEmpty { reply["substitutions"] = shown.substitutions.map(\.description) }
            return json(201, reply)
        }
        return router
    }

    static func json(_ status: Int, _ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: .init(code: status), headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Refuses requests without the configured key (compared in constant time) with 401.
    struct KeyCheck: RouterMiddleware {
        typealias Context = BasicRequestContext
        let key: String?

        func handle(_ request: Request, context: Context,
                    next: (Request, Context) async throws -> Response) async throws -> Response {
            guard let key else { return try await next(request, context) }
            guard let given = request.headers[LocalAPI.keyHeader], constantTimeEqual(given, key) else {
                return LocalAPI.json(401, ["error": "missing or wrong X-Vestaboard-Local-Api-Key"])
            }
            return try await next(request, context)
        }
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
