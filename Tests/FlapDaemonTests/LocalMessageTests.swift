import Foundation
import Testing
@testable import FlapDaemon

@Suite struct LocalMessageTests {
    func parse(_ s: String) -> Result<LocalMessage, LocalAPIError> { LocalMessage.parse(Data(s.utf8)) }

    @Test func theShapesExistingClientsSend() {
        #expect(parse("[[1,2],[3,4]]") == .success(.codes([[1, 2], [3, 4]])))
        #expect(parse(#"{"characters": [[0]], "strategy": "column"}"#) == .success(.codes([[0]])))
        #expect(parse(#"{"text": "hi"}"#) == .success(.text("hi")))
    }

    @Test func badBodiesNameTheProblem() {
        #expect(parse("not json") == .failure(.badRequest("body is not JSON")))
        #expect(parse(#"[[1,"x"]]"#) == .failure(.badRequest("message[0][1] is not a whole-number code")))
        #expect(parse(#"{"characters": [[1, true]]}"#) == .failure(.badRequest("characters[0][1] is not a whole-number code")))
        #expect(parse(#"{"characters": [[1.5]]}"#) == .failure(.badRequest("characters[0][0] is not a whole-number code")))
        #expect(parse(#"{"text": 5}"#) == .failure(.badRequest("text is not a string")))
        guard case .failure(let e) = parse(#"{"hello": 1}"#) else { Issue.record("accepted"); return }
        #expect(e.message.contains("characters"))
        guard case .failure = parse("42") else { Issue.record("accepted a number"); return }
    }

    @Test func keysCompareExactly() {
        #expect(LocalAPI.constantTimeEqual("abc", "abc"))
        #expect(!LocalAPI.constantTimeEqual("abc", "abd"))
        #expect(!LocalAPI.constantTimeEqual("abc", "abcd"))
        #expect(!LocalAPI.constantTimeEqual("", "a"))
    }
}
