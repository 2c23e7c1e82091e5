import FlapCore
import FlapMessages
import Testing

@Suite struct ZoneTests {
    func message(_ id: String, from sender: String, text: String = "HI", at t: Double = 1000,
                 type: InboxMessage.ContentType = .text) -> InboxMessage {
        InboxMessage(id: id, senderID: "id-\(sender)", senderName: sender, content: text, contentType: type, sentAt: t)
    }

    @Test func sendersGoToTheZonesThatListThemAndTheRestToStar() {
        let router = SenderRouter(zones: [
            Zone(rows: 0..<3, cols: 0..<22, senders: .listed(["Alice", "id-bob"])),
            Zone(rows: 3..<6, cols: 0..<22, senders: .everyoneElse),
            Zone(board: 1, rows: 0..<6, cols: 0..<22, senders: .listed(["alice"])),
        ])
        #expect(router.zones(for: message("1", from: "alice")) == [0, 2])  // by username, any case
        #expect(router.zones(for: message("2", from: "bob")) == [0])       // by id
        #expect(router.zones(for: message("3", from: "carol")) == [1])
        #expect(SenderRouter(zones: [Zone(rows: 0..<1, cols: 0..<1, senders: .listed(["x"]))])
            .zones(for: message("4", from: "carol")).isEmpty)
    }

    @Test func overlapIsPerBoard() {
        let a = Zone(rows: 0..<3, cols: 0..<11)
        #expect(a.overlaps(Zone(rows: 2..<4, cols: 10..<22)))
        #expect(!a.overlaps(Zone(rows: 3..<6, cols: 0..<22)))
        #expect(!a.overlaps(Zone(board: 1, rows: 0..<3, cols: 0..<11)))
    }

    @Test func theNewestShowsAtOnceAndRotationTakesTurns() {
        var cursor = ZoneCursor()
        let a = message("a", from: "alice", at: 100), b = message("b", from: "bob", at: 200)
        var pick = cursor.pick([a], rotateSeconds: 10, now: 300)
        #expect(pick.message?.id == "a" && pick.next == nil)  // alone: no rotation
        pick = cursor.pick([a, b], rotateSeconds: 10, now: 301)
        #expect(pick.message?.id == "b" && pick.next == 311)  // new arrival shows at once
        pick = cursor.pick([a, b], rotateSeconds: 10, now: 305)
        #expect(pick.message?.id == "b" && pick.next == 311)
        pick = cursor.pick([a, b], rotateSeconds: 10, now: 311)
        #expect(pick.message?.id == "a" && pick.next == 321)
        pick = cursor.pick([a, b], rotateSeconds: 10, now: 321)
        #expect(pick.message?.id == "b")
        // Without rotation the latest stays.
        var still = ZoneCursor()
        #expect(still.pick([a, b], rotateSeconds: nil, now: 400).message?.id == "b")
        #expect(still.pick([a, b], rotateSeconds: nil, now: 9999).message?.id == "b")
        // The sender shown is gone: the latest live one shows.
        #expect(cursor.pick([a], rotateSeconds: 10, now: 322).message?.id == "a")
        #expect(cursor.pick([], rotateSeconds: 10, now: 323).message == nil)
    }

    @Test func aZoneComposesTheNameLineAndTheText() {
        let zone = Zone(rows: 0..<3, cols: 0..<11, layout: Layout(horizontal: .left, vertical: .top), nameLine: true)
        let part = Composer().compose(message("1", from: "alice", text: "good morning"), in: zone, mapper: GlyphMapper(drum: .standard))
        #expect(PlainFrame.lines(part.frame) == ["ALICE      ", "GOOD       ", "MORNING    "])
        #expect(part.cut.isEmpty)
        let blank = Composer().compose(nil, in: zone, mapper: GlyphMapper(drum: .standard))
        #expect(blank.frame == Frame(rows: 3, cols: 11))
        let long = Composer().compose(message("2", from: "bob", text: "one two three four five"), in: zone, mapper: GlyphMapper(drum: .standard))
        #expect(long.cut == ["FIVE"])
    }

    @Test func aPatternIsPlacedFromTheTopLeftAndCropped() {
        let zone = Zone(rows: 0..<2, cols: 0..<3)
        let part = Composer().compose(message("p", from: "a", text: "[[63, 64,65,66],[1],[2]]", type: .pattern), in: zone,
                                      mapper: GlyphMapper(drum: .extended))
        #expect(part.frame.codes == [[63, 64, 65], [1, 0, 0]])
        #expect(!part.cut.isEmpty)
        let bad = Composer().compose(message("q", from: "a", text: "[[99]]", type: .pattern), in: zone, mapper: GlyphMapper(drum: .extended))
        #expect(bad.problem?.contains("99") == true)
    }

    @Test func patternsAreRowsOfCodes() throws {
        #expect(try PatternCodes.parse("[[1,2],[3]]").get() == [[1, 2], [3]])
        #expect(try PatternCodes.parse(" [ [ 63 , 64 ] ] ").get() == [[63, 64]])
        for bad in ["", "[]", "[1,2]", "[[1 2]]", "[[72]]", "[[1],[2]", "[[[1]]]", "[[a]]", "[[1]]]",
                    // Digits with combining marks and keycaps sort between "0" and "9" (the fuzzer's crash).
                    "[[5\u{301}]]", "[[1\u{FE0F}\u{20E3}]]", "[[\u{663}]]"] {
            #expect(throws: (any Error).self, "\(bad)") { try PatternCodes.parse(bad).get() }
        }
    }
}

/// The rows of a frame as text (blank as space), for readable expectations.
enum PlainFrame {
    static func lines(_ frame: Frame) -> [String] {
        (0..<frame.rows).map { r in String((0..<frame.cols).map { c in Character(frame[r, c].text) }) }
    }
}
