@testable import FlapBoard
@testable import FlapConfig
import FlapCore
@testable import FlapLocalAPI
import FlapNet
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// Issue 38, item 3: saved boards — the store (bounded, kept in the state folder, read back) and
/// the local API's routes, in process, through the real mailroom and wall.
@Suite struct SavedBoardsTests {
    func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flap-saved-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func theStoreKeepsNamedBoardsBoundedAndOnDisk() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let saved = SavedBoards(folder: dir)
        let heard = Mutex<[[String]]>([])
        saved.onChange { names in heard.withLock { $0.append(names) } }
        #expect(saved.problem == nil && saved.names.isEmpty)
        #expect(try saved.save("morning", codes: [[1, 2], [3, 4]], now: 10).new)
        #expect(try saved.save("evening", codes: [[5]], now: 11).new)
        #expect(try saved.save("morning", codes: [[6, 7]], now: 12).new == false, "a name saved again is replaced")
        #expect(saved.names == ["evening", "morning"] && saved.saved("morning")?.codes == [[6, 7]])
        #expect(heard.withLock { $0 } == [["morning"], ["evening", "morning"], ["evening", "morning"]])
        // Read back by a new process.
        let again = SavedBoards(folder: dir)
        #expect(again.list() == saved.list() && again.saved("morning")?.savedAt == 12)
        // Names and bounds.
        for bad in ["", "has space", "a/b", "ü", String(repeating: "x", count: 41), "..%2F"] {
            #expect(throws: SavedBoards.Refusal.self, "\(bad)") { try saved.save(bad, codes: [[1]], now: 1) }
        }
        #expect(throws: SavedBoards.Refusal(status: 413, description: "at most 4096 codes")) {
            try saved.save("huge", codes: Array(repeating: Array(repeating: 0, count: 200), count: 21), now: 1)
        }
        for i in 0..<30 { _ = try saved.save("b\(i)", codes: [[1]], now: 1) }
        #expect(throws: SavedBoards.Refusal(status: 409, description: "at most 32 saved boards; delete one first")) {
            try saved.save("one-too-many", codes: [[1]], now: 1)
        }
        #expect(try saved.save("morning", codes: [[1]], now: 13).new == false, "replacing one is not one more")
        #expect(try saved.delete("b0") && !(try saved.delete("b0")))
        #expect(SavedBoards(folder: dir).names.count == 31)
        // A file that does not read is named, and the next save replaces it.
        try "not json".write(toFile: dir + "/saved-boards.json", atomically: true, encoding: .utf8)
        let broken = SavedBoards(folder: dir)
        #expect(broken.problem?.contains("saved-boards.json") == true && broken.names.isEmpty)
        _ = try broken.save("fresh", codes: [[1]], now: 1)
        #expect(SavedBoards(folder: dir).names == ["fresh"])
    }

    /// A file written by hand (or by another program) is held to what a save takes: a board
    /// past 4,096 codes, a bad name, past 32 boards — each left out, the rest read.
    @Test func aFileIsReadWithinWhatASaveTakes() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = (0..<40).map { #"{"name":"g\#($0)","savedAt":1,"codes":[[1]]}"# }
        let bad = [#"{"name":"huge","savedAt":1,"codes":[[\#(Array(repeating: "0", count: 4097).joined(separator: ","))]]}"#,
                   #"{"name":"a/b","savedAt":1,"codes":[[1]]}"#]
        try "[\((bad + good).joined(separator: ","))]".write(toFile: dir + "/saved-boards.json", atomically: true, encoding: .utf8)
        let saved = SavedBoards(folder: dir)
        #expect(saved.problem == nil)
        #expect(saved.names == (0..<32).map { "g\($0)" }.sorted(), "\(saved.names)")
    }

    func handler(_ saved: SavedBoards) throws -> (@Sendable (LocalHTTPServer.Request) async -> LocalHTTPServer.Response, Wall) {
        let config = try ConfigLoader.parse("")
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = Wall(config: config, drivers: [], logger: logger)
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger) { _, _ in }
        let status = DaemonStatus(wall: wall, sound: nil, mailroom: mailroom)
        return (LocalAPI.handler(wall: wall, mailroom: mailroom, key: "k", logger: logger, status: status, saved: saved), wall)
    }

    func request(_ method: HTTPMethod, _ path: String, _ body: String = "", key: String? = "k") -> LocalHTTPServer.Request {
        var headers = HTTPHeaders()
        if let key { headers.add(name: "X-Vestaboard-Local-Api-Key", value: key) }
        return LocalHTTPServer.Request(method: method, path: path, headers: headers, body: ByteBuffer(string: body))
    }

    func json(_ r: LocalHTTPServer.Response) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]) ?? [:] }

    @Test func theLocalAPISavesListsRestoresAndDeletes() async throws {
        let saved = SavedBoards(folder: nil)
        let (handle, wall) = try handler(saved)
        #expect(await handle(request(.POST, "/local-api/message", #"{"text":"GOOD MORNING"}"#)).status == 201)
        let morning = wall.localCodes()
        let made = await handle(request(.POST, "/saved", #"{"name":"morning"}"#))
        #expect(made.status == 201 && json(made)["message"] as? [[Int]] == morning && json(made)["name"] as? String == "morning")
        #expect(await handle(request(.POST, "/saved", #"{"name":"morning"}"#)).status == 200, "saved again: replaced")
        let list = json(await handle(request(.GET, "/saved")))["saved"] as? [[String: Any]]
        #expect(list?.count == 1 && list?.first?["name"] as? String == "morning" && list?.first?["rows"] as? Int == 6 && list?.first?["cols"] as? Int == 22)
        #expect(json(await handle(request(.GET, "/saved/morning")))["message"] as? [[Int]] == morning)

        #expect(await handle(request(.POST, "/local-api/message", #"{"text":"GOOD EVENING"}"#)).status == 201)
        #expect(wall.localCodes() != morning)
        let restored = await handle(request(.POST, "/saved/morning/restore", #"{"transition":"wave","speed":"gentle"}"#))
        #expect(restored.status == 201, "\(json(restored))")
        #expect(wall.localCodes() == morning, "the saved board is what the board goes to")

        let refused = [
            (request(.POST, "/saved/morning/restore", #"{"text":"HI"}"#), 400),
            (request(.POST, "/saved/morning/restore", #"{"transition":"zigzag"}"#), 400),
            (request(.POST, "/saved/nope/restore"), 404),
            (request(.GET, "/saved/nope"), 404),
            (request(.POST, "/saved", #"{"name":"a b"}"#), 400),
            (request(.POST, "/saved", #"{"title":"x"}"#), 400),
            (request(.POST, "/saved", "[1"), 400),
            (request(.PUT, "/saved"), 405),
            (request(.PUT, "/saved/morning"), 405),
            (request(.GET, "/saved/morning/restore"), 405),
            (request(.GET, "/saved/a/b/c"), 404),
            (request(.GET, "/saved", key: nil), 401),
        ]
        for (r, status) in refused {
            let answer = await handle(r)
            #expect(answer.status == status, "\(r.method) \(r.path) \(String(buffer: r.body)): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        // A 405 names what the path takes (RFC 9110: Allow).
        for (path, allow) in [("/saved", "GET, POST"), ("/saved/morning", "GET, DELETE"), ("/saved/morning/restore", "POST")] {
            let answer = await handle(request(.PUT, path))
            #expect(answer.status == 405 && answer.headers.first { $0.0 == "Allow" }?.1 == allow, "\(path): \(answer.headers)")
        }
        #expect(await handle(request(.DELETE, "/saved/morning")).status == 204)
        #expect(await handle(request(.DELETE, "/saved/morning")).status == 404)
        let after = json(await handle(request(.GET, "/saved")))
        #expect((after["saved"] as? [Any])?.isEmpty == true, "\(after)")
    }
}
