@testable import FlapMessages
import Foundation
import Testing
@testable import FlapCore

/// What a board tells the hub of how it shows senders, and how the hub reads it back.
@Suite struct BoardFaceTests {
    let zones = [
        Zone(rows: 0..<3, cols: 0..<22, senders: .listed(["alice", "@local"]), layout: Layout(horizontal: .left), nameLine: true),
        Zone(rows: 3..<6, cols: 0..<22, senders: .everyoneElse),
        Zone(rows: 0..<1, cols: 0..<5, senders: .listed(["@local"])),
    ]

    var face: BoardFace { BoardFace(zones: zones, mapper: { _ in GlyphMapper(drum: .standard, substitutes: [",": .blank]) }) }

    @Test func zonesBecomeAreasWithoutTheLocalSender() {
        #expect(face.areas.count == 2, "the @local-only zone is not the hub's business")
        #expect(face.areas[0].senders == ["alice"] && face.areas[0].rows == 3 && face.areas[0].nameLine && face.areas[0].horizontal == "left")
        #expect(face.areas[1].senders == nil && face.areas[1].drum.count == 40 && face.areas[1].substitutes == [",": 0])
        #expect(face.problem == nil)
    }

    @Test func aSenderGetsTheAreaTheRouterWouldGiveThem() {
        #expect(face.area(senderID: "id-1", username: "Alice") == face.areas[0], "listed, whatever the case")
        #expect(face.area(senderID: "alice", username: "x") == face.areas[0], "listed by id")
        #expect(face.area(senderID: "id-2", username: "bob") == face.areas[1], "everyone else")
        let listedOnly = BoardFace(areas: [face.areas[0]])
        #expect(listedOnly.area(senderID: "id-2", username: "bob") == nil, "no zone shows bob")
    }

    @Test func aFaceGoesOverTheWireUnchanged() throws {
        #expect(try WireFrame.decode(WireFrame.face(face).text) == .face(face))
    }

    @Test func whatABoardMaySayIsBounded() {
        func problem(_ change: (inout BoardFace.Area) -> Void) -> String? {
            var a = face.areas[0]
            change(&a)
            return BoardFace(areas: [a]).problem
        }
        #expect(problem { $0.rows = 0 }?.hasPrefix("area 1: rows and cols") == true)
        #expect(problem { $0.cols = 129 } != nil && problem { $0.rows = 100; $0.cols = 100 } != nil)
        #expect(problem { $0.drum = [] } == "area 1: drum must be 1–72 distinct Vestaboard codes")
        #expect(problem { $0.drum = [0, 0] } != nil && problem { $0.drum = [0, 99] } != nil && problem { $0.drum = Array(repeating: 1, count: 100) } != nil)
        #expect(problem { $0.horizontal = "sideways" } == "area 1: layout 'sideways/center' is not one")
        #expect(problem { $0.fallback = 43 } != nil && problem { $0.substitutes = ["x": 99] } != nil)
        #expect(problem { $0.substitutes = ["a long key": 0] } != nil)
        #expect(BoardFace(areas: Array(repeating: face.areas[1], count: 33)).problem == "more than 32 areas")
        #expect(BoardFace.composing(face.areas[0])?.zone.rows == 0..<3)
    }
}
