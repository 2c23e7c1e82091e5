import FlapCore
import FlapHubInput
import FlapMessages
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Vestaboard's Cloud API (`X-Vestaboard-Token`) and its predecessor the Read/Write API
/// (`X-Vestaboard-Read-Write-Key`) at the hub's root, so that their clients work unchanged with
/// `base_url` set to the hub: `GET /` what the board shows, `POST /` a message to it, `GET`/`PUT
/// /transition` how it moves. A token belongs to one board (a hub user that a flapd signs in
/// as) and reads, writes or both; either header takes it. A write is a message of the board's
/// own account to itself, under the message API's rules and hourly limit.
extension Hub {
    static let cloudTokenHeader = HTTPField.Name("X-Vestaboard-Token")!
    static let readWriteKeyHeader = HTTPField.Name("X-Vestaboard-Read-Write-Key")!

    /// The Cloud API token or Read/Write key a request carries, if any.
    static func vestaboardCredential(_ request: Request) -> String? {
        request.headers[cloudTokenHeader] ?? request.headers[readWriteKeyHeader]
    }

    func vestaboardRoutes(_ router: Router<BasicRequestContext>) {
        router.post("/") { request, _ in try await self.vestaboardWrite(request) }
        router.get("/transition") { request, _ in
            let token = try await self.vestaboardToken(request, write: false)
            let set = try await self.store.transition(of: token.userID) ?? .init(transition: "classic", speed: "fast")
            return try self.reply(200, TransitionAnswer(transition: set.transition, transitionSpeed: set.speed))
        }
        router.put("/transition") { request, _ in
            let token = try await self.vestaboardToken(request, write: true)
            let body = try await self.json(request)
            guard let transition = body["transition"] as? String, TransitionAnswer.transitions.contains(transition) else {
                throw HubError(400, "\"transition\" must be one of \(TransitionAnswer.transitions.joined(separator: ", "))")
            }
            guard let speed = body["transitionSpeed"] as? String, TransitionStyle.Speed(rawValue: speed) != nil else {
                throw HubError(400, "\"transitionSpeed\" must be gentle or fast")
            }
            try await self.store.setTransition(transition, speed: speed, of: token.userID)
            return try self.reply(200, TransitionAnswer(transition: transition, transitionSpeed: speed))
        }
    }

    /// `GET /` with a token: `{"currentMessage": {"id", "layout", "created"}}`, the layout a JSON
    /// string of the rows the board last said it shows (null until it has said).
    func vestaboardRead(_ request: Request) async throws -> Response {
        let token = try await vestaboardToken(request, write: false)
        let shown = try await store.layout(of: token.userID)
        let layout = shown.map { String(decoding: (try? JSONEncoder().encode($0.layout)) ?? Data(), as: UTF8.self) }
        return try reply(200, CurrentAnswer(currentMessage: .init(id: shown?.id, layout: layout,
                                                                    created: shown.map { Int64($0.reportedAt * 1000) })))
    }

    /// `POST /`: the message goes to the board as its own account's, with the board's transition.
    func vestaboardWrite(_ request: Request) async throws -> Response {
        let token = try await vestaboardToken(request, write: true)
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: maxBody) } catch { throw HubError(413, "body is larger than \(maxBody) bytes") }
        let write = try VestaboardWrite.read(Array(buffer: body))
        guard let board = try await store.user(token.userID) else { throw HubError(401, "Invalid token") }
        let t = now()
        let m = message(from: board, to: board.id, content: write.content, type: write.type, at: t, unlockAt: nil,
                        options: MessageOptions(forced: write.forced ? true : nil), transition: try await store.transition(of: board.id))
        try await storeAndPush([m], by: board, at: t)
        return try reply(201, WriteAnswer(id: m.id, created: Int64(t * 1000)))
    }

    /// The request's token, which must read (or write); 401 without a known one, 403 without the right.
    func vestaboardToken(_ request: Request, write: Bool) async throws -> HubStore.VestaboardToken {
        guard let presented = Self.vestaboardCredential(request), let token = try await store.vestaboardToken(presented) else {
            throw HubError(401, "Invalid token")
        }
        guard write ? token.canWrite : token.canRead else {
            throw HubError(403, "this token does not \(write ? "write" : "read")")
        }
        return token
    }

    struct CurrentAnswer: Encodable {
        struct Current: Encodable {
            var id: String?
            var layout: String?
            var created: Int64?
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encode(layout, forKey: .layout)
                try c.encode(created, forKey: .created)
            }
            enum CodingKeys: String, CodingKey { case id, layout, created }
        }
        var currentMessage: Current
    }

    struct WriteAnswer: Encodable {
        var status = "ok"
        var id: String
        var created: Int64
    }

    struct TransitionAnswer: Encodable {
        static let transitions = ["classic", "wave", "drift", "curtain"]
        var transition: String
        var transitionSpeed: String
    }
}
