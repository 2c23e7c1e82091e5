import FlapCore
import FlapHubInput
import FlapMessages
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The sender's page (`/`, its assets built in) and the API it uses beyond the message API:
/// sign-in by a one-time link, a sender's own messages, and previews on each recipient's board.
extension Hub {
    func senderPageRoutes(_ router: Router<BasicRequestContext>, api: RouterGroup<BasicRequestContext>) {
        for (path, bytes, type) in [("/", SenderPageAssets.html, "text/html; charset=utf-8"),
                                    ("/app.js", SenderPageAssets.script, "text/javascript; charset=utf-8"),
                                    ("/app.css", SenderPageAssets.style, "text/css; charset=utf-8")] {
            router.get(RouterPath(path)) { request, _ in
                // The root is also Vestaboard's Cloud API, for a request that carries its token.
                if path == "/", Self.vestaboardCredential(request) != nil { return try await self.vestaboardRead(request) }
                return Self.asset(bytes, type)
            }
            // What a monitor or `curl -I` asks: the same head, no body.
            router.head(RouterPath(path)) { _, _ in
                var r = Self.asset([], type)
                r.headers[.contentLength] = "\(bytes.count)"
                return r
            }
        }
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }  // none; a browser asks

        api.post("sessions") { request, _ in
            let body = try await self.json(request)
            guard let code = body["link"] as? String, (1...128).contains(code.utf8.count) else {
                throw HubError(400, "\"link\" must be the code of a sign-in link")
            }
            guard let (user, token) = try await self.store.signIn(code: code, now: self.now()) else {
                throw HubError(401, "this sign-in link is unknown, used or expired: ask for a new one")
            }
            self.logger.info("signed in by a link", metadata: ["user": "\(user.username)"])
            return try self.reply(201, SessionAnswer(token: token, user: user))
        }
        api.delete("sessions/current") { request, _ in
            _ = try await self.caller(request)
            try await self.store.signOut(token: Self.bearer(request) ?? "")
            return Response(status: .noContent)
        }
        api.get("messages/sent") { request, _ in
            let me = try await self.caller(request)
            let sent = try await self.store.sent(by: me.id, now: self.now()).map {
                SentMessage(message: HubStore.api($0.message, sender: me), recipient: $0.recipient)
            }
            return try self.reply(200, ["messages": sent])
        }
        api.post("messages/preview") { request, _ in try await self.preview(request) }
    }

    /// `POST /api/v1/messages/preview` (the body of a send): what each recipient's board would
    /// show — its size, the lines, what is cut and substituted — as the board said it shows
    /// this sender, or as flapd's default (`assumed`) when it never said. Nothing is stored.
    func preview(_ request: Request) async throws -> Response {
        let me = try await caller(request)
        let t = now()
        let sending = try SendRequest.read(try await json(request), now: t, ttl: limits.messageTTL)
        var previews: [Preview] = []
        for name in sending.recipients {
            guard let recipient = try await store.recipient(name, of: me.id), recipient.friends else {
                previews.append(Preview(recipient: name, problem: "not a friend")); continue
            }
            let to = recipient.user
            let face = try await store.face(of: to.id)
            guard let area = (face ?? .assumed).area(senderID: me.id, username: me.username),
                  let (zone, mapper) = BoardFace.composing(area) else {
                previews.append(Preview(recipient: to.username, problem: "this board shows no messages from you")); continue
            }
            let m = InboxMessage(id: "preview", senderID: me.id, senderName: me.username, content: sending.content,
                                 contentType: sending.type, sentAt: t)
            let part = Composer().compose(m, in: zone, mapper: mapper)
            let cells = (0..<part.frame.rows).map { r in (0..<part.frame.cols).map { c in part.frame[r, c].text } }
            previews.append(Preview(recipient: to.username, reported: face != nil, rows: area.rows, cols: area.cols,
                                    cells: cells, cut: part.cut, substitutions: part.substitutions.map(\.description),
                                    problem: part.problem))
        }
        return try reply(200, ["previews": previews])
    }

    static func bearer(_ request: Request) -> String? {
        guard let h = request.headers[.authorization], h.hasPrefix("Bearer ") else { return nil }
        return String(h.dropFirst(7))
    }

    static func asset(_ bytes: [UInt8], _ type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache",
                                        .contentSecurityPolicy: "default-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'"],
                 body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    struct SessionAnswer: Encodable {
        var token: String
        var user: HubStore.User
    }

    /// A message as its sender sees it: with its recipient's name.
    struct SentMessage: Encodable {
        var message: APIMessage
        var recipient: String
    }

    struct Preview: Encodable {
        var recipient: String
        /// Whether the board said how it shows this sender (else flapd's default is assumed).
        var reported = false
        var rows = 0, cols = 0
        /// Each module's glyph as text: a character, or `{NN}` for a colour chip.
        var cells: [[String]] = []
        var cut: [String] = []
        var substitutions: [String] = []
        var problem: String?
    }
}

/// The sender's page's files (`Web/assets`), built into the binary (`embedInCode`).
enum SenderPageAssets {
    static let html = PackageResources.index_html
    static let script = PackageResources.app_js
    static let style = PackageResources.app_css
}
