import FlapClock
import FlapConfig
import FlapCore
import FlapHubInput
import FlapInput
import FlapLocalAPI
import FlapMQTTBridge
import FlapMessages
import FlapNet
import FlapSerial
import FlapBoard
import Foundation
import Logging

/// Every parser of what reaches flapd and flaphub from outside, as a function of bytes that
/// must return — never crash, never hang — whatever the bytes are.
enum FuzzTargets {
    static let all: [String: @Sendable ([UInt8]) -> Void] = [
        // The strict JSON check every JSON door goes through.
        "json": { bytes in _ = try? StrictJSON.check(bytes) },
        // The local API's POST body.
        "local-api": { bytes in _ = LocalPost.parse(Data(bytes)) },  // the message, then its transition and arriveAt
        // The local API's POST /saved body (issue 38): a name that is a saved board's.
        "saved": { bytes in
            if case .success(let name) = SavedRoutes.name(bytes) { precondition(SavedBoards.isName(name), "a name the store refuses") }
        },
        // The local API's POST /calibration body (issue 35).
        "calibration": { bytes in _ = CalibrationRoutes.parse(bytes) },
        // A VBML document as the local API takes it, and as a message's content (text no door
        // looked into: the hub's send, flapd's composer), rendered as a board (and a Note) would —
        // and within its limits: what renders holds only Vestaboard's codes, from templates of
        // at most 16,384 characters (issue 39: a long template without a tag got through).
        "vbml": { bytes in
            var documents: [VBMLDocument] = []
            if let content = try? VBMLDocument.decode(Data(bytes)) { documents.append(content) }
            if case .success(.vbml(let posted)) = LocalMessage.parse(Data(bytes)), !documents.contains(posted) { documents.append(posted) }
            for document in documents {
                for (rows, cols, seed) in [(6, 22, UInt64(1)), (3, 15, 2)] {
                    guard let board = try? VBML.render(document, rows: rows, cols: cols, seed: seed) else { continue }
                    precondition(board.joined().allSatisfy { Glyph(code: $0) != nil }, "VBML rendered a code Vestaboard does not have")
                    precondition(document.components.allSatisfy { ($0.template?.count ?? 0) <= 16_384 }, "VBML rendered a template over its limit")
                }
            }
        },
        // An MQTT message topic's payload, as the bridge takes it into the local API's door: bytes
        // that are not UTF-8 never reach the board.
        "mqtt": { bytes in
            switch MQTTPayload.messageBody(bytes) {
            case .failure: return
            case .success(let body):
                precondition(String(validating: bytes, as: UTF8.self) != nil, "MQTT took bytes that are not UTF-8")
                _ = LocalPost.parse(body)
            }
        },
        // A schedule's path into a JSON source (issue 36), read and followed on a document.
        "json-path": { bytes in
            guard let path = try? JSONPath(String(decoding: bytes, as: UTF8.self)) else { return }
            precondition(path.steps.count <= JSONPath.maxSteps)
            _ = path.value(in: ["a": [1, ["b": "c"]], "list": [[0], [1]]] as [String: Any])
        },
        // An iCalendar feed (issue 36), read and expanded over a month, as a calendar source is:
        // bounded by its limits, sorted, never more than asked.
        "icalendar": { bytes in
            guard let cal = try? ICalendar.parse(bytes) else { return }
            let (found, _) = cal.occurrences(from: 1_798_761_600, to: 1_801_440_000, zone: TimeZone(identifier: "Europe/Berlin")!, limit: 50)
            precondition(found.count <= 50 && zip(found, found.dropFirst()).allSatisfy { $0.start <= $1.start }, "occurrences unsorted or too many")
        },
        // flapd.yaml, as check-config, run and SIGHUP read it.
        "config": { bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else { return }
            _ = try? ConfigLoader.parse(text)
        },
        // A running flapd's /status and /selftest answers, as `flapd status` and `flapd selftest`
        // read them (from whatever listens on the port).
        "status": { bytes in
            _ = try? StatusReport.decode(Data(bytes))
            _ = try? SelfTestReport.decode(Data(bytes))
        },
        // A frame from the message API, and a new message's content composed as flapd would —
        // on a whole board and on a zone with its sender's name: whatever a hub sends, text,
        // pattern or VBML, flapd's composer returns.
        "api-frame": { bytes in
            guard case .success(.new(let m)) = APIFrame.decode(String(decoding: bytes, as: UTF8.self)) else { return }
            let mapper = GlyphMapper(drum: .standard)
            for zone in [Zone(rows: 0..<6, cols: 0..<22), Zone(rows: 0..<3, cols: 4..<19, layout: Layout(horizontal: .right, vertical: .bottom), nameLine: true)] {
                let part = Composer().compose(m.inboxMessage, in: zone, mapper: mapper)
                precondition(part.frame.rows == zone.rows.count && part.frame.cols == zone.cols.count, "a composed part not the zone's size")
            }
            boardWaits(on: [m.inboxMessage])
        },
        // flapd's inbox.json, read at every start: what a board then does with its messages' times.
        "inbox-file": { bytes in
            guard let saved = try? StateFile.decode(InboxStore.Saved.self, from: Data(bytes), file: "inbox.json") else { return }
            boardWaits(on: Array(saved.inbox.live.values) + Array(saved.inbox.beneath.values) + saved.inbox.held)
        },
        // flapd's boards.json and saved-boards.json, read at every start: a board state taken
        // back onto the board it fits (as the daemon restores it), a saved board's codes played
        // back as the local API's message (as POST /saved/NAME does).
        "state-files": { bytes in
            if let state = try? StateFile.decode(StateStore.Document.self, from: Data(bytes), file: "boards.json") {
                for s in state.boards where s.id == fuzzBoard.id && s.rows == fuzzBoard.rows && s.cols == fuzzBoard.cols {
                    _ = fuzzWall.restore(board: 0, positions: s.positions, target: s.target)
                }
            }
            if let list = try? StateFile.decode([SavedBoards.Saved].self, from: Data(bytes), file: "saved-boards.json") {
                for s in SavedBoards.kept(list).values {
                    precondition(SavedBoards.isName(s.name) && s.codes.joined().count <= SavedBoards.maxCodes, "a saved board save would refuse")
                    if let body = try? JSONSerialization.data(withJSONObject: ["characters": s.codes]) { _ = LocalPost.parse(body) }
                }
            }
        },
        // flapd's calibration.json, read at every start of a board with home sensors.
        "calibration-file": { bytes in _ = try? Calibration.parse(bytes, file: "calibration.json") },
        // flaphub: a POST /api/v1/messages body, and a WebSocket frame from a board.
        "hub-send": { bytes in
            guard let object = try? SendRequest.object(bytes) else { return }
            _ = try? SendRequest.read(object, now: 1_800_000_000, ttl: 172_800)
        },
        // A notification of another flaphub instance (through PostgreSQL): an event read from
        // one is noticed again as itself (a new message's frame dropped only when too big).
        "hub-notice": { bytes in
            guard let event = RelayEvent.read(Substring(String(decoding: bytes, as: UTF8.self))) else { return }
            var expected = event
            if case .message(let id, let recipient, .some) = event, event.notice.hasPrefix("m") { expected = .message(id: id, recipient: recipient, frame: nil) }
            precondition(RelayEvent.read(Substring(event.notice)) == expected, "a notice that does not read back")
        },
        // A write of Vestaboard's Cloud or Read/Write API (issue 38): what it takes is a message
        // the message API itself would take.
        "vestaboard-write": { bytes in
            guard let write = try? VestaboardWrite.read(bytes) else { return }
            precondition(write.type != .vbml && MessageRules.problem(content: write.content, type: write.type) == nil, "a write the message API refuses")
        },
        // A board's face taken is then composed on, as a sender's preview does; what a board
        // says it shows is checked against its bounds.
        "hub-frame": { bytes in
            let frame = HubInput.frame(String(decoding: bytes, as: UTF8.self))
            if case .shows(let layout)? = frame { _ = WireFrame.layoutProblem(layout) }
            guard case .face(let face)? = frame, face.problem == nil,
                  let area = face.area(senderID: "s", username: "alice"), let (zone, mapper) = BoardFace.composing(area) else { return }
            _ = Composer().compose(InboxMessage(id: "p", senderID: "s", senderName: "alice", content: "HELLO, {63} WORLD", sentAt: 0),
                                   in: zone, mapper: mapper)
        },
        // flaphub's `database` value when it names PostgreSQL.
        "hub-database": { bytes in _ = PostgresSettings.parse(String(decoding: bytes, as: UTF8.self)) },
        // What modules send back: the splitflap display's frames and flapbus controllers'
        // replies, as raw bytes and framed with a valid CRC (so the fuzzer reaches the fields).
        "splitflap": { bytes in
            var splitter = FrameSplitter()
            for frame in splitter.take(bytes) { _ = try? SplitflapProtocol.decode(frame) }
            _ = try? SplitflapProtocol.decode(Array(SplitflapProtocol.frame(bytes).dropLast()))
        },
        "flapbus": { bytes in
            var splitter = FrameSplitter()
            for frame in splitter.take(bytes) { _ = try? Flapbus.decode(frame) }
            _ = try? Flapbus.decode(COBS.encode(bytes + CRC32.littleEndian(bytes)))
        },
    ]
}

/// The board `boardWaits` plans on and `fuzzWall` holds: the embedded default's.
let fuzzConfig = try! ConfigLoader.parse("boards: [{ id: wall }]")
let fuzzBoard = fuzzConfig.boards[0]
/// A wall of that board that never starts: what a saved state is taken back onto.
let fuzzWall = Wall(config: fuzzConfig, drivers: [], logger: Logger(label: "flapfuzz", factory: { _ in SwiftLogNoOpLogHandler() }))

/// What a board does with messages' times, whatever they say: takes them into an inbox, waits
/// for its next change, plans each one's landing — none of it may trap (an unlock of 1e308 once
/// stopped flapd at its wait, and an arrival of 1e300 at its plan).
func boardWaits(on messages: [InboxMessage]) {
    let now = 1_800_000_000.0
    var inbox = Inbox()
    for m in messages.prefix(64) {
        _ = inbox.receive(m, now: now)
        _ = Mailroom.style(of: m, on: fuzzBoard, now: now)
    }
    _ = inbox.advance(now: now)
    if let next = inbox.nextChange { _ = Doorbell.duration(next - now + 0.001) }
}
