@testable import FlapBoard
import FlapClock
@testable import FlapConfig
import FlapCore
@testable import FlapLocalAPI
import FlapNet
import FlapTerminal
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing
@testable import FlapDaemon

/// Issue 16, item 1, in process: the web page's routes behind the local API's handler — assets
/// without the key and nothing else, the preview that shows nothing, the quiet switch and its
/// hostile bodies — and the feed's events as the page reads them.
@Suite struct WebRoutesTests {
    let key = "hall-key"

    func handler(_ yaml: String = "") throws -> (@Sendable (LocalHTTPServer.Request) async -> LocalHTTPServer.Response, Wall, Mailroom) {
        let config = try ConfigLoader.parse(yaml)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = Wall(config: config, drivers: [], logger: logger)
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger) { _, _ in }
        let status = DaemonStatus(wall: wall, sound: nil, mailroom: mailroom)
        return (LocalAPI.handler(wall: wall, mailroom: mailroom, key: key, logger: logger, status: status, feed: WebFeed()), wall, mailroom)
    }

    func request(_ method: HTTPMethod, _ path: String, _ body: String? = nil, key: String? = "hall-key") -> LocalHTTPServer.Request {
        var headers = HTTPHeaders()
        if let key { headers.add(name: "X-Vestaboard-Local-Api-Key", value: key) }
        return LocalHTTPServer.Request(method: method, path: path, headers: headers, body: ByteBuffer(string: body ?? ""))
    }

    func json(_ r: LocalHTTPServer.Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]) ?? [:]
    }

    @Test func assetsNeedNoKeyAndNothingElseIsOpen() async throws {
        let (answer, _, _) = try handler()
        for (path, type) in [("/", "text/html"), ("/app.js", "text/javascript"), ("/app.css", "text/css"), ("/calibrate.js", "text/javascript")] {
            let r = await answer(request(.GET, path, key: nil))
            #expect(r.status == 200 && r.contentType.hasPrefix(type) && r.body.count > 1000, "\(path)")
        }
        let html = String(decoding: await answer(request(.GET, "/", key: nil)).body, as: UTF8.self)
        #expect(!html.contains("http://") && !html.contains("https://"), "nothing is fetched from elsewhere")
        for (method, path) in [(HTTPMethod.GET, "/events"), (.POST, "/local-api/preview"), (.POST, "/quiet"), (.GET, "/status"), (.POST, "/calibration")] {
            let r = await answer(request(method, path, "{}", key: "wrong"))
            #expect(r.status == 401 && String(decoding: r.body, as: UTF8.self) == "Invalid API key", "\(path)")
        }
        // A 405 names what the path takes (RFC 9110: Allow).
        for (method, path, allow) in [(HTTPMethod.POST, "/app.js", "GET"), (.DELETE, "/local-api/message", "GET, POST"), (.GET, "/quiet", "POST"),
                                      (.PUT, "/selftest", "GET, POST"), (.GET, "/local-api/enablement", "POST")] {
            let r = await answer(request(method, path))
            #expect(r.status == 405 && r.headers.first { $0.0 == "Allow" }?.1 == allow, "\(method) \(path): \(r.status) \(r.headers)")
        }
        let selftest = await answer(request(.POST, "/selftest"))
        #expect(selftest.status == 409 && String(decoding: selftest.body, as: UTF8.self).contains("no module to turn"))
        let calibration = await answer(request(.GET, "/calibration"))
        #expect(calibration.status == 404 && String(decoding: calibration.body, as: UTF8.self).contains("no board has stepper modules"))
    }

    @Test func thePreviewShowsWhatWouldShowAndMovesNothing() async throws {
        let (answer, wall, _) = try handler()
        let long = String(repeating: "WORDS THAT GO ON ", count: 12) + "AND ÆON"
        let r = await answer(request(.POST, "/local-api/preview", #"{"text": "\#(long)"}"#))
        let body = json(r)
        #expect(r.status == 200 && body["rows"] as? Int == 6 && body["cols"] as? Int == 22)
        #expect((body["cut"] as? [String])?.isEmpty == false, "\(body)")
        #expect(body["substitutions"] as? [String] == ["'Æ' shown as ' '"])
        #expect((body["message"] as? [[Int]])?.first?.prefix(5) == [23, 15, 18, 4, 19], "WORDS")
        #expect(wall.target(board: 0).codes.joined().allSatisfy { $0 == 0 }, "the board did not move")
        #expect(await answer(request(.POST, "/local-api/preview", #"{"characters": [[1]]}"#)).status == 400)
        #expect(await answer(request(.POST, "/local-api/preview", "{")).status == 400)
    }

    @Test func theQuietSwitchHoldsAndLetsGo() async throws {
        let (answer, wall, mailroom) = try handler()
        var r = await answer(request(.POST, "/quiet", #"{"quiet": true}"#))
        #expect(r.status == 200 && (json(r)["quiet"] as? [String: Any])?["active"] as? Bool == true)
        r = await answer(request(.POST, "/local-api/message", #"{"text": "SHH"}"#))
        #expect(r.status == 202 && json(r)["held"] as? String == "quiet hours" && json(r)["until"] is NSNull, "\(json(r))")
        #expect(mailroom.waiting().map(\.reason) == [.quietHours])
        let status = try StatusReport.decode(Data(await answer(request(.GET, "/status")).body))
        #expect(status.quiet == StatusReport.Quiet(active: true, until: nil, messages: .hold, switched: true))
        r = await answer(request(.POST, "/quiet", #"{"quiet": null}"#))
        #expect(r.status == 200 && mailroom.quiet() == nil, "no hours configured: none once switched back")
        #expect(PlainFrame.rows(wall.target(board: 0))[2].contains("SHH"), "switching off shows what waited")
        for bad in [#"{"quiet": 1}"#, "{}", #"{"quiet": true, "x": 1}"#, "quiet", #"{"quiet": "on"}"#, String(repeating: " ", count: 300)] {
            #expect(await answer(request(.POST, "/quiet", bad)).status == 400, "\(bad)")
        }
    }

    @Test func statusSaysWhatEachZoneShowsAndWhoSentIt() async throws {
        let (answer, _, _) = try handler()
        _ = await answer(request(.POST, "/local-api/message", #"{"text": "HI", "duration": 60}"#))
        let status = try StatusReport.decode(Data(await answer(request(.GET, "/status")).body))
        let zone = try #require(status.zones?.first)
        #expect(zone.board == "wall" && zone.rows == [0, 5] && zone.cols == [0, 21] && zone.sender == "local")
        #expect(zone.until != nil, "a temporary message says when it ends")
        #expect(status.latenessBinsUs == LatenessHistogram.binEdgesMicros && status.conductor.latenessBins?.count == 12)
    }

    @Test func theFeedWritesFlipsInBatchesAndSettledFramesApart() throws {
        let frame = Frame(rows: 1, cols: 2, filledWith: Glyph(code: 1)!)
        let flip = { (col: Int) in
            WebFeed.Item.flip(FlipEvent(board: 0, row: 0, col: col, flip: 0, glyph: Glyph(code: 1)!, transition: 3,
                                        transitionStart: 0, planned: 1_500_000 + Int64(col) * 20_000_000, actual: 1_600_000))
        }
        let chunks = WebFeed.events([flip(0), flip(1), .settled(board: 0, transition: 3, frame: frame), flip(0)])
            .map { String(decoding: $0, as: UTF8.self) }
        #expect(chunks.count == 3 && chunks[0].hasPrefix("event: flips\ndata: {") && chunks.allSatisfy { $0.hasSuffix("}\n\n") })
        #expect(chunks[0].contains(#""flips":[[0,0,0,1,1.5,1.6,3],[0,0,1,1,21.5,1.6,3]]"#), "\(chunks[0])")
        #expect(chunks[1] == "event: settled\ndata: {\"board\":0,\"codes\":[[1,1]],\"transition\":3}\n\n")
        #expect(chunks[2].hasPrefix("event: flips"))
    }

    @Test func theFeedTakesAtMostItsWatchers() async throws {
        let feed = WebFeed()
        let first = try #require(feed.watch { .empty })
        let reader = Task { var n = 0; for await _ in first { n += 1 }; return n }
        let others = (1..<WebFeed.maxWatchers).compactMap { _ in feed.watch { .empty } }
        #expect(others.count == WebFeed.maxWatchers - 1 && feed.watch(hello: { .empty }) == nil, "one more is refused")
        reader.cancel()  // the page goes: its place is free again
        #expect(await reader.value == 1, "it had its hello")
        #expect(feed.watch(hello: { .empty }) != nil)
        feed.finish()
    }

    @Test func aPageThatSeesNoFlipGetsKeepalives() async throws {
        let feed = WebFeed(keepaliveEvery: 0.05)
        let keepalive = Task { await feed.run() }
        defer { keepalive.cancel() }
        let stream = try #require(feed.watch { .empty })
        var chunks = stream.makeAsyncIterator()
        let hello = await chunks.next().map { String(decoding: $0, as: UTF8.self) }
        let next = await chunks.next().map { String(decoding: $0, as: UTF8.self) }
        #expect(hello?.hasPrefix("event: hello\n") == true && next == ": keepalive\n\n")
    }

    @Test func latenessBinsCountEachEventOnce() {
        var h = LatenessHistogram()
        for ns: Int64 in [-5, 0, 9_999, 10_000, 150_000, 999_999, 1_000_000, 25_000_000, 90_000_000] { h.record(ns) }
        #expect(h.bins() == [3, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 2])
    }
}

extension LocalReply.Hello {
    /// A hello of no boards, for tests of the feed itself.
    static var empty: LocalReply.Hello {
        .init(boards: [], grids: [], local: .init(board: "", rows: 0, cols: 0), glyphs: [], now: 0)
    }
}
