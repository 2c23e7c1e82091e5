@testable import FlapBoard
@testable import FlapConfig
import FlapCore
@testable import FlapLocalAPI
@testable import FlapMessages
import FlapNet
import FlapTerminal
import Foundation
import Logging
import Testing
@testable import FlapDaemon

/// Issue 15, item 3: the Note and the Flagship as presets, and several boards addressed as one
/// grid (as Note arrays are) as well as each on its own.
@Suite struct BoardGridTests {
    static let notes = """
        message_api: { url: "http://127.0.0.1:9/", token: "t" }
        boards:
          - { id: left, model: note }
          - { id: right, model: note }
        grids:
          - { id: pair, boards: [[left, right]] }
        local_api: { board: pair }
        zones:
          - { board: pair, rows: [0, 0], senders: [alice] }
          - { board: right, rows: [2, 2], senders: [bob] }
        """

    @Test func modelsArePresetsOfSizeAndTheNoteDrawsAHeart() throws {
        let config = try ConfigLoader.parse("boards: [{ id: a, model: note }, { id: b, model: flagship }, { id: c }]")
        #expect(config.boards.map { [$0.rows, $0.cols] } == [[3, 15], [6, 22], [6, 22]])
        #expect(config.boards.map(\.heart) == [true, false, false])
        var frame = Frame(rows: 1, cols: 2)
        frame[0, 0] = Glyph(code: 62)!
        #expect(PlainFrame.rows(frame, heart: true) == ["\u{2764} "] && PlainFrame.rows(frame) == ["° "])
        #expect(throws: ConfigError.self) { try ConfigLoader.parse("boards: [{ model: note, rows: 6 }]") }
        do { _ = try ConfigLoader.parse("boards: [{ model: note, rows: 6 }]") } catch {
            #expect("\(error)".contains("boards[0].model: a note is 3 × 15, but rows × cols say 6 × 15"), "\(error)")
        }
    }

    @Test func aGridIsItsBoardsSideBySideAndAZoneOnItHasAPieceOnEach() throws {
        let config = try ConfigLoader.parse(Self.notes)
        let grid = try #require(config.grids.first)
        #expect(grid.rows == 3 && grid.cols == 30)
        let right = try #require(grid.origins[1])
        let place: [Int] = [right.row, right.col, right.rows, right.cols]
        #expect(place == [0, 15, 3, 15])
        #expect(config.localSize.rows == 3 && config.localSize.cols == 30 && config.localBoardIndex == 0)
        let local = try #require(config.routedZones.last)
        #expect(local.pieces == [Zone.Piece(board: 0, rows: 0..<3, cols: 0..<15, partRow: 0, partCol: 0),
                                 Zone.Piece(board: 1, rows: 0..<3, cols: 0..<15, partRow: 0, partCol: 15)])
        #expect(grid.pieces(rows: 1..<3, cols: 10..<20) == [Zone.Piece(board: 0, rows: 1..<3, cols: 10..<15, partRow: 0, partCol: 0),
                                                             Zone.Piece(board: 1, rows: 1..<3, cols: 0..<5, partRow: 0, partCol: 5)])
    }

    @Test func gridsThatCannotBeAreNamed() {
        func problem(_ yaml: String) -> String {
            do { _ = try ConfigLoader.parse(yaml); return "" } catch { return "\(error)" }
        }
        #expect(problem("boards: [{ id: a, model: note }, { id: b }]\ngrids: [{ id: g, boards: [[a, b]] }]")
            .contains("grids[0].boards: 'b' has 6 rows, 'a' beside it 3: boards side by side must be as tall"))
        #expect(problem("boards: [{ id: a }]\ngrids: [{ id: g, boards: [[a, z]] }]").contains("grids[0].boards[0][1]: 'z' is not a board"))
        #expect(problem("boards: [{ id: a }, { id: b }]\ngrids: [{ id: a, boards: [[a, b]] }]").contains("'a' is used by another board or grid"))
        #expect(problem("boards: [{ id: a }, { id: b }]\ngrids: [{ id: g, boards: [[a, b]] }]\nzones: [{ board: g, cols: [0, 44], senders: '*' }]")
            .contains("[0, 44] is outside board 'g' (columns 0…43)"))
    }

    /// A message of the grid's zone is laid out once across both Notes; a zone of one board
    /// shows only there; the local API's post fills the whole grid.
    @Test func messagesGoAcrossTheGridOrOntoOneBoard() async throws {
        let config = try ConfigLoader.parse(Self.notes)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = Wall(config: config, drivers: [], logger: logger)
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger) { _, _ in }
        func message(_ id: String, from sender: String, text: String) -> InboxMessage {
            InboxMessage(id: id, senderID: sender, senderName: sender, content: text, sentAt: Date().timeIntervalSince1970)
        }
        func rows(_ board: Int) -> [String] { PlainFrame.rows(wall.target(board: board), heart: true) }
        await mailroom.take(.new(message("a1", from: "alice", text: "ABCDEFGHIJKLMNOPQRSTUVWXYZ1234")))
        #expect(rows(0)[0] == "ABCDEFGHIJKLMNO" && rows(1)[0] == "PQRSTUVWXYZ1234")
        await mailroom.take(.new(message("b1", from: "bob", text: "BOB {62}")))
        #expect(rows(1)[2] == "     BOB \u{2764}     " && rows(0)[2] == String(repeating: " ", count: 15))
        let shown = await mailroom.post("HI THERE", type: .text, how: (nil, nil))
        #expect(shown != nil)
        #expect(wall.localCodes().count == 3 && wall.localCodes().allSatisfy { $0.count == 30 })
        // Centred on 3 × 30: from column 11, across the seam at 15.
        #expect(rows(0)[1] == "           HI T" && rows(1)[1] == "HERE           ")
    }
}
