import FlapBoard
import FlapCore
import FlapInput
import FlapNet
import Foundation

/// `GET /calibration` (the session) and `POST /calibration` (one request of the maker's), behind
/// the local API's key like everything else (issue 35). A body is one JSON object:
///
///     {"action": "start"}   {"action": "end"}
///     {"action": "step", "board": "wall", "row": 0, "col": 3, "steps": 1}   (1 by default; -1: a turn less one)
///     {"action": "flap", "board": "wall", "row": 0, "col": 3}
///     {"action": "mark", "board": "wall", "row": 0, "col": 3, "showing": "A"}   (a character, or a code)
///
/// `board` may be left out on a wall of one stepper board. Answers: the session
/// (`CalibrationSession.Status`) for start and end; the module after the request
/// (`CalibratedModule`, and the session) otherwise; 400 for a body it cannot read, 409 for a
/// request the module or the session refuses now — each naming what was wrong.
public enum CalibrationRoutes {
    static let path = "/calibration"
    public static let limits = JSONLimits(maxBytes: 512, maxDepth: 2, maxValues: 16)

    struct Reply: Encodable {
        var module: CalibratedModule?
        var session: CalibrationSession.Status
    }

    /// What a body asks for, read: the session begun or ended, or one module turned or marked
    /// (`board` nil: the only stepper board, which the handler resolves).
    public enum Command: Equatable, Sendable {
        case start, end
        case act(board: String?, row: Int, col: Int, CalibrationAction)
    }

    /// Reads a POST body — bytes from outside, so every limit is checked first — into what it
    /// asks for, or a sentence naming what was wrong (answered 400).
    public static func parse(_ bytes: [UInt8]) -> Result<Command, BodyProblem> {
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: limits) } catch {
            return .failure(BodyProblem("body is not JSON within \(limits.maxBytes) bytes: \(error)"))
        }
        let body: CalibrationRequest
        do { body = try JSONDecoder().decode(CalibrationRequest.self, from: Data(bytes)) } catch {
            return .failure(BodyProblem("expected {\"action\": \"start\" | \"end\" | \"step\" | \"flap\" | \"mark\", …}: \(Self.reason(error))"))
        }
        switch body.action {
        case "start": return .success(.start)
        case "end": return .success(.end)
        case "step", "flap", "mark": break
        default: return .failure(BodyProblem("action: '\(body.action)' is not start, end, step, flap or mark"))
        }
        guard let row = body.row, let col = body.col else { return .failure(BodyProblem("row and col: missing (each from 0)")) }
        let action: CalibrationAction
        switch body.action {
        case "step": action = .steps(body.steps ?? 1)
        case "flap": action = .flap
        default:
            guard let showing = body.showing else { return .failure(BodyProblem("showing: missing (the flap the module shows: \"A\", or a code)")) }
            let glyph: Glyph? = switch showing {
            case .code(let n): Glyph(code: n)
            case .character(let s): s.count == 1 ? Glyph(character: s.first!.uppercased().first!) : nil
            }
            guard let glyph else { return .failure(BodyProblem("showing: expected one character (\" \" for the blank) or a code 0–71")) }
            action = .showing(glyph)
        }
        return .success(.act(board: body.board, row: row, col: col, action))
    }

    /// Why a body was not read, in words.
    public struct BodyProblem: Error, Equatable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    static func handle(_ request: LocalHTTPServer.Request, session: CalibrationSession) async -> LocalHTTPServer.Response {
        if request.method == .GET { return LocalAPI.json(200, Reply(session: session.status)) }
        guard request.method == .POST else { return LocalAPI.notAllowed(request, allow: [.GET, .POST]) }
        guard !request.tooLarge else { return LocalAPI.json(413, ["error": "body is larger than \(limits.maxBytes) bytes"]) }
        let command: Command
        switch parse(Array(request.body.readableBytesView)) {
        case .success(let c): command = c
        case .failure(let problem): return LocalAPI.json(400, ["error": problem.description])
        }
        switch command {
        case .start: return LocalAPI.json(200, Reply(session: await session.begin()))
        case .end: return LocalAPI.json(200, Reply(session: await session.end()))
        case .act(let named, let row, let col, let action):
            let boards = session.status.boards
            guard let board = named ?? (boards.count == 1 ? boards[0] : nil) else {
                return LocalAPI.json(400, ["error": "board: missing (the stepper boards: \(boards.joined(separator: ", ")))"])
            }
            do throws(CalibrationProblem) {
                let module = try await session.act(board: board, row: row, col: col, action)
                return LocalAPI.json(200, Reply(module: module, session: session.status))
            } catch {
                return LocalAPI.json(error.status, ["error": error.description])
            }
        }
    }

    /// A decoding error in words: the field and what was wrong with it.
    static func reason(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            return "\(c.codingPath.map(\.stringValue).joined(separator: ".")): \(c.debugDescription)"
        case .keyNotFound(let key, _): return "\(key.stringValue): missing"
        default: return "\(error)"
        }
    }
}
