import FlapBoard
import FlapClock
import FlapCore
import FlapInput
import FlapMessages
import FlapNet
import Foundation

/// The web page's part of the local API: the page and its assets (built into the binary, the
/// same for everyone: they hold no data), and — behind the key, as every other route — the live
/// board (`GET /events`), a preview of a message (`POST /local-api/preview`) and the quiet
/// switch (`POST /quiet`).
enum WebRoutes {
    /// The assets, by path: what the page is made of. Nothing is fetched from elsewhere.
    static let assets: [String: (type: String, body: [UInt8])] = [
        "/": ("text/html; charset=utf-8", WebAssets.html),
        "/app.js": ("text/javascript; charset=utf-8", WebAssets.script),
        "/calibrate.js": ("text/javascript; charset=utf-8", WebAssets.calibrate),
        "/app.css": ("text/css; charset=utf-8", WebAssets.style),
    ]
    typealias Response = LocalHTTPServer.Response

    /// An asset, if the request asks for one.
    static func asset(_ request: LocalHTTPServer.Request) -> Response? {
        guard request.method == .GET, let a = assets[request.path] else { return nil }
        return Response(status: 200, contentType: a.type, body: a.body, headers: [("Cache-Control", "no-cache")])
    }

    /// `GET /events`: server-sent events — `hello` (the boards, what they show, the glyphs,
    /// the clock), then `flips` and `settled` as the conductor fires them.
    static func events(feed: WebFeed, wall: Wall) -> Response {
        guard let stream = feed.watch(hello: { hello(wall) }) else {
            return LocalAPI.json(503, ["error": "\(WebFeed.maxWatchers) pages watch the board already"])
        }
        return Response(status: 200, contentType: "text/event-stream", stream: stream)
    }

    /// What a page needs before the first flip: every board (size, flip time, what it shows now),
    /// the grids, the local API's board, the glyph of each code, and the monotonic clock (ms).
    static func hello(_ wall: Wall) -> LocalReply.Hello {
        let c = wall.config
        let boards = c.boards.enumerated().map { i, b in
            LocalReply.Hello.Board(id: b.id, rows: b.rows, cols: b.cols, heart: b.heart, output: b.output.rawValue,
                                   flip_ms: Double(b.timing.flip) / 1e6, codes: wall.conductor.frame(board: i).codes,
                                   moving: wall.conductor.isMoving(board: i))
        }
        let glyphs = Glyph.all.map { g in
            guard let chip = g.chip else { return LocalReply.Hello.GlyphRow(code: Int(g.code), text: g.text, colour: nil) }
            let (r, gr, b) = chip.rgb
            return LocalReply.Hello.GlyphRow(code: Int(g.code), text: "", colour: String(format: "#%02x%02x%02x", r, gr, b))
        }
        let local = c.localAPI.board ?? c.boards[c.localBoardIndex].id
        return LocalReply.Hello(boards: boards, grids: c.grids.map { .init(id: $0.id, boards: $0.boards) },
                                local: .init(board: local, rows: c.localSize.rows, cols: c.localSize.cols),
                                glyphs: glyphs, now: WebFeed.ms(MonotonicClock.now()))
    }

    /// `POST /local-api/preview`: what a message (the body `POST /local-api/message` takes) would
    /// show, without showing it — the frame of the local sender's zone, what is cut, what is
    /// substituted.
    static func preview(_ request: LocalHTTPServer.Request, mailroom: Mailroom, wall: Wall) -> Response {
        guard !request.tooLarge else { return LocalAPI.json(413, ["error": "body is larger than \(LocalAPI.maxBody) bytes"]) }
        let size = wall.config.localSize
        let result = LocalPost.parse(Data(buffer: request.body)).flatMap { LocalAPI.inboxContent($0.message, rows: size.rows, cols: size.cols) }
        let content: (text: String, type: InboxMessage.ContentType)
        switch result {
        case .failure(let e): return LocalAPI.json(e.status, ["error": e.message])
        case .success(let c): content = c
        }
        guard let (part, zone) = mailroom.preview(content.text, type: content.type) else {
            return LocalAPI.json(409, ["error": "no zone takes the local sender (@local)"])
        }
        if let problem = part.problem { return LocalAPI.json(400, ["error": problem]) }
        return LocalAPI.json(200, LocalReply.Preview(message: part.frame.codes, cut: part.cut, substitutions: part.substitutions.map(\.description),
                                                     rows: zone.rows.count, cols: zone.cols.count))
    }

    /// Limits of the quiet switch's body: `{"quiet": true | false | null}`.
    static let quietLimits = JSONLimits(maxBytes: 256, maxDepth: 2, maxValues: 8)

    /// `POST /quiet` `{"quiet": true}` (quiet now, until switched again), `false` (not even in
    /// the configured hours), `null` (the configured hours decide) → 200 with quiet as it stands.
    static func quiet(_ request: LocalHTTPServer.Request, mailroom: Mailroom) async -> Response {
        let bytes = Array(request.body.readableBytesView)
        guard !request.tooLarge else { return LocalAPI.json(413, ["error": "body is larger than \(quietLimits.maxBytes) bytes"]) }
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: quietLimits) } catch {
            return LocalAPI.json(400, ["error": "body is not JSON within \(quietLimits.maxBytes) bytes: \(error)"])
        }
        // One key, `quiet`, and nothing else; true, false or null.
        guard let body = try? JSONDecoder().decode([String: Bool?].self, from: Data(bytes)), body.count == 1, let on = body["quiet"] else {
            return LocalAPI.json(400, ["error": "expected {\"quiet\": true | false | null}"])
        }
        await mailroom.setQuiet(on)
        let q = mailroom.quiet()
        return LocalAPI.json(200, LocalReply.Quiet(active: q?.active ?? false, until: q?.until, switched: q?.switched))
    }
}
