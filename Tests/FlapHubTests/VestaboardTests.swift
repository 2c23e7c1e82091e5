import FlapHubInput
import FlapMessages
import Foundation
import Testing
@testable import FlapHub

/// Vestaboard's Cloud API on the hub, in process: what a write body may be, and what the store
/// keeps of tokens, layouts and transitions, on both engines.
@Suite struct VestaboardTests {
    func read(_ json: String) -> Result<VestaboardWrite, HubError> {
        do throws(HubError) { return .success(try VestaboardWrite.read(Array(json.utf8))) } catch { return .failure(error) }
    }

    func refusal(_ json: String) -> String? {
        if case .failure(let e) = read(json) { return "\(e.status) \(e.description)" }
        return nil
    }

    @Test func aWriteIsTextCharactersOrTheBareRows() throws {
        let row = "[" + (["3", "8"] + Array(repeating: "0", count: 20)).joined(separator: ",") + "]"
        #expect(try read(#"{"text":"Hello"}"#).get() == VestaboardWrite(content: "Hello", type: .text, forced: false))
        #expect(try read(#"{"text":"Hello","forced":true}"#).get().forced)
        #expect(try read(#"{"characters":[\#(row)],"forced":true}"#).get() == VestaboardWrite(content: "[\(row)]", type: .pattern, forced: true))
        #expect(try read("[\(row),\(row)]").get().type == .pattern, "the Read/Write API's bare rows")
        #expect(try read(#"{"characters":[[63,64,65,66,67,68,69,70,71]]}"#).get().content == "[[63,64,65,66,67,68,69,70,71]]")
    }

    @Test func aWrongWriteIsA400ThatSaysWhat() {
        #expect(refusal("{}") == #"400 body needs "text" or "characters""#)
        #expect(refusal(#"{"text":"a","characters":[[1]]}"#) == #"400 give "text" or "characters", not both"#)
        #expect(refusal(#"{"text":5}"#) == #"400 "text" must be a string"#)
        #expect(refusal(#"{"text":"a","forced":"yes"}"#) == #"400 "forced" must be true or false"#)
        #expect(refusal(#"{"characters":[[1,72]]}"#) == "400 characters: row 1, column 2 is not a code 0…71")
        #expect(refusal(#"{"characters":[[1,true]]}"#) == "400 characters: row 1, column 2 is not a code 0…71")
        #expect(refusal(#"{"characters":[[1],2]}"#) == "400 characters: row 2 is not a list of codes")
        #expect(refusal(#"{"characters":[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]]}"#) == "400 characters: pattern is larger than 6 rows × 22 columns")
        #expect(refusal(#"{"text":"\#(String(repeating: "A", count: 133))"}"#) == "400 text: content has 133 characters; at most 132")
        #expect(refusal("\"text\"")?.hasPrefix("400 body must be") == true)
        #expect(refusal("[[1]")?.hasPrefix("400 body is not JSON") == true)
    }
}

extension VestaboardTests {
    @Test(arguments: Engine.allCases) func tokensLayoutsAndTransitionsAreKeptPerBoard(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (board, _) = try await store.addUser("board", now: 1)
        let (other, _) = try await store.addUser("other", now: 1)
        let (rw, token) = try await store.addVestaboardToken(for: board.id, read: true, write: true, now: 10)
        let (ro, readOnly) = try await store.addVestaboardToken(for: board.id, read: true, write: false, now: 11)
        #expect(token.hasPrefix("vb_") && token != readOnly)
        #expect(try await store.vestaboardToken(token) == rw)
        #expect(try await store.vestaboardToken(readOnly)?.canWrite == false)
        #expect(try await store.vestaboardToken("vb_" + String(token.dropFirst(3).reversed())) == nil)
        #expect(try await store.vestaboardTokens(of: board.id).map(\.id) == [rw.id, ro.id])
        #expect(try await store.revokeVestaboardToken(rw.id, of: other.id) == false, "a board revokes only its own")
        #expect(try await store.revokeVestaboardToken(rw.id, of: board.id) == true)
        #expect(try await store.vestaboardToken(token) == nil)
        await #expect(throws: HubError.self) { try await store.addVestaboardToken(for: board.id, read: false, write: false, now: 12) }
        for i in 1..<HubStore.maxVestaboardTokens { _ = try await store.addVestaboardToken(for: board.id, read: true, write: false, now: 20 + Double(i)) }
        await #expect(throws: HubError.self, "at most 32 a board") { try await store.addVestaboardToken(for: board.id, read: true, write: false, now: 99) }

        #expect(try await store.layout(of: board.id) == nil)
        let hi = [[8, 9], [0, 0]]
        try await store.setLayout(hi, of: board.id, now: 100)
        let first = try #require(try await store.layout(of: board.id))
        try await store.setLayout(hi, of: board.id, now: 200)
        #expect(try await store.layout(of: board.id) == first, "the same layout keeps its id and time")
        try await store.setLayout([[1, 2], [3, 4]], of: board.id, now: 300)
        let second = try #require(try await store.layout(of: board.id))
        #expect(second.id != first.id && second.layout == [[1, 2], [3, 4]] && second.reportedAt == 300)
        #expect(try await store.layout(of: other.id) == nil)

        #expect(try await store.transition(of: board.id) == nil)
        try await store.setTransition("wave", speed: "gentle", of: board.id)
        try await store.setTransition("drift", speed: "fast", of: board.id)
        #expect(try await store.transition(of: board.id).map { [$0.transition, $0.speed] } == ["drift", "fast"])
        #expect(try await store.transition(of: other.id) == nil)
        // A send reads it with the recipient, in the same statement.
        #expect(try await store.recipient(board.username, of: other.id)?.transition.map { [$0.transition, $0.speed] } == ["drift", "fast"])
        let plain = try #require(try await store.recipient(other.id, of: board.id))
        #expect(plain.user.id == other.id && plain.transition == nil)
    }

    @Test func aBoardsLayoutIsBounded() {
        #expect(WireFrame.layoutProblem([[0, 71]]) == nil)
        #expect(WireFrame.layoutProblem([]) == "layout has 0 rows; 1–48")
        #expect(WireFrame.layoutProblem([[1], [1, 2]]) == "layout rows must all have the same 1–200 codes")
        #expect(WireFrame.layoutProblem([[72]]) == "layout code 72 is not 0…71")
        #expect(WireFrame.layoutProblem(Array(repeating: Array(repeating: 0, count: 200), count: 21)) == "layout has 4200 codes; at most 4096")
    }
}
