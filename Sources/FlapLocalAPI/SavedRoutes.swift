import FlapBoard
import FlapClock
import FlapInput
import FlapNet
import Foundation
import Logging
import NIOFoundationCompat

/// Saved boards through the local API (behind its key): `GET /saved` lists them, `POST /saved`
/// `{"name"}` saves what the local API's board (or grid) shows, `GET /saved/NAME` reads one,
/// `POST /saved/NAME/restore` plays it back as the local sender's message (with the body's
/// transition fields and `forced`, as `POST /local-api/message` takes them), `DELETE
/// /saved/NAME` forgets it. The MQTT bridge restores and saves through `restore` and `save`.
public enum SavedRoutes {
    static let path = "/saved"
    typealias Request = LocalHTTPServer.Request
    typealias Response = LocalHTTPServer.Response

    struct Listed: Encodable {
        var name: String
        var saved_at: Double
        var rows: Int
        var cols: Int
    }

    struct One: Encodable {
        var name: String
        var saved_at: Double
        var message: [[Int]]
    }

    /// Whether the path is one of its own.
    static func owns(_ path: String) -> Bool { path == Self.path || path.hasPrefix(Self.path + "/") }

    static func handle(_ request: Request, saved: SavedBoards, mailroom: Mailroom, wall: Wall, logger: Logger) async -> Response {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)
        switch (request.method, parts.count, parts.last) {
        case (.GET, 0, _):
            return LocalAPI.json(200, ["saved": saved.list().map { Listed(name: $0.name, saved_at: $0.savedAt, rows: $0.codes.count, cols: $0.codes.first?.count ?? 0) }])
        case (.POST, 0, _):
            guard !request.tooLarge else { return LocalAPI.json(413, ["error": "body is larger than \(LocalAPI.maxBody) bytes"]) }
            switch name(Array(buffer: request.body)) {
            case .failure(let why): return LocalAPI.json(400, ["error": why.description])
            case .success(let name): return await save(name, saved: saved, wall: wall, logger: logger)
            }
        case (.GET, 1, let name?):
            guard let s = saved.saved(name) else { return notFound(name) }
            return LocalAPI.json(200, One(name: s.name, saved_at: s.savedAt, message: s.codes))
        case (.DELETE, 1, let name?): return await delete(name, saved: saved, logger: logger)
        case (.POST, 2, "restore"):
            guard !request.tooLarge else { return LocalAPI.json(413, ["error": "body is larger than \(LocalAPI.maxBody) bytes"]) }
            return await restore(parts[0], body: Data(buffer: request.body), saved: saved, mailroom: mailroom, wall: wall, logger: logger)
        case (_, 0, _): return LocalAPI.notAllowed(request, allow: [.GET, .POST])
        case (_, 1, _): return LocalAPI.notAllowed(request, allow: [.GET, .DELETE])
        case (_, 2, "restore"): return LocalAPI.notAllowed(request, allow: [.POST])
        default: return LocalAPI.json(404, ["error": "no such path: \(request.path)"])
        }
    }

    /// What a save's body may be: `{"name": …}`, strict JSON of at most 512 bytes.
    public static let limits = JSONLimits(maxBytes: 512, maxDepth: 2, maxValues: 8)

    /// The name a save's body gives (bytes from outside: every limit checked first), or why not.
    public static func name(_ bytes: [UInt8]) -> Result<String, CalibrationRoutes.BodyProblem> {
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: limits) } catch {
            return .failure(.init("body is not JSON within \(limits.maxBytes) bytes: \(error)"))
        }
        guard let body = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], let name = body["name"] as? String else {
            return .failure(.init("body must be {\"name\": …}"))
        }
        guard SavedBoards.isName(name) else {
            return .failure(.init("a saved board's name is 1–\(SavedBoards.maxNameLength) letters, digits, '_', '-' or '.'"))
        }
        return .success(name)
    }

    /// Saves what the local API's board (or grid) is going to show under `name`.
    package static func save(_ name: String, saved: SavedBoards, wall: Wall, logger: Logger) async -> LocalHTTPServer.Response {
        let codes = wall.localCodes()
        let now = Date().timeIntervalSince1970
        switch await onDisk({ () throws(SavedBoards.Refusal) in try saved.save(name, codes: codes, now: now) }) {
        case .success(let (s, new)):
            logger.info("board saved", metadata: ["name": "\(name)"])
            return LocalAPI.json(new ? 201 : 200, One(name: s.name, saved_at: s.savedAt, message: s.codes))
        case .failure(let r): return LocalAPI.json(r.status, ["error": r.description])
        }
    }

    /// Forgets a saved board: 204, or 404.
    package static func delete(_ name: String, saved: SavedBoards, logger: Logger) async -> LocalHTTPServer.Response {
        switch await onDisk({ () throws(SavedBoards.Refusal) in try saved.delete(name) }) {
        case .success(true):
            logger.info("saved board deleted", metadata: ["name": "\(name)"])
            return LocalHTTPServer.Response(status: 204, contentType: "application/json", body: [])
        case .success(false): return notFound(name)
        case .failure(let r): return LocalAPI.json(r.status, ["error": r.description])
        }
    }

    /// Plays a saved board back as the local sender's message; `body`: nothing, or a JSON object
    /// of the transition fields and `forced`.
    package static func restore(_ name: String, body: Data, saved: SavedBoards, mailroom: Mailroom, wall: Wall,
                                logger: Logger) async -> LocalHTTPServer.Response {
        guard let s = saved.saved(name) else { return notFound(name) }
        var object: [String: Any] = [:]
        if !body.isEmpty {
            do throws(JSONInputError) { try StrictJSON.check(Array(body), limits: LocalMessage.limits) } catch {
                return LocalAPI.json(400, ["error": "body is not JSON: \(error)"])
            }
            guard let given = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
                return LocalAPI.json(400, ["error": "body must be empty or a JSON object of transition fields and \"forced\""])
            }
            if let key = given.keys.first(where: { ["characters", "text", "message", "components"].contains($0) }) {
                return LocalAPI.json(400, ["error": "\"\(key)\": a restore plays the saved board; give only how (transition fields, forced)"])
            }
            object = given
        }
        let size = wall.config.localSize
        guard s.codes.count == size.rows, s.codes.allSatisfy({ $0.count == size.cols }) else {
            return LocalAPI.json(409, ["error": "'\(name)' was saved on \(s.codes.count) × \(s.codes.first?.count ?? 0); the board is \(size.rows) × \(size.cols)"])
        }
        object["characters"] = s.codes
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return LocalAPI.json(400, ["error": "body could not be read"]) }
        logger.info("saved board restored", metadata: ["name": "\(name)"])
        return LocalAPI.answer(await LocalAPI.accept(data, mailroom: mailroom, wall: wall), mailroom: mailroom, wall: wall, logger: logger)
    }

    static func notFound(_ name: String) -> Response { LocalAPI.json(404, ["error": "no saved board '\(name)'"]) }

    /// A change of the saved boards (it writes the file), off the event loops.
    static func onDisk<T: Sendable>(_ body: @escaping @Sendable () throws(SavedBoards.Refusal) -> T) async -> Result<T, SavedBoards.Refusal> {
        await BlockingWork.run { () -> Result<T, SavedBoards.Refusal> in
            do throws(SavedBoards.Refusal) { return .success(try body()) } catch { return .failure(error) }
        }
    }
}
