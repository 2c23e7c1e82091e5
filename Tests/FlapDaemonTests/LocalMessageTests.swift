@testable import FlapLocalAPI
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
        #expect(parse("not json") == .failure(.badRequest("body is not JSON: expected null at line 1, column 1 (byte 0)")))
        #expect(parse(#"[[1,"x"]]"#) == .failure(.badRequest("message[0][1] is not a whole-number code")))
        #expect(parse(#"{"characters": [[1, true]]}"#) == .failure(.badRequest("characters[0][1] is not a whole-number code")))
        #expect(parse(#"{"characters": [[1.5]]}"#) == .failure(.badRequest("characters[0][0] is not a whole-number code")))
        #expect(parse(#"{"text": 5}"#) == .failure(.badRequest("text is not a string")))
        guard case .failure(let e) = parse(#"{"hello": 1}"#) else { Issue.record("accepted"); return }
        #expect(e.message.contains("characters"))
        guard case .failure = parse("42") else { Issue.record("accepted a number"); return }
    }

    /// Issue 18: these crashed flapd (a depth of 513 at the last byte) or were taken leniently.
    @Test func hostileBodiesAreRefusedBeforeAnyDecoder() {
        let deep = [String(repeating: "[", count: 513), " " + String(repeating: "[", count: 513),
                    #"{"text":"# + String(repeating: "[", count: 512), #"{"characters":"# + String(repeating: "[", count: 512),
                    String(repeating: #"[{"a":"#, count: 256) + "["]
        for body in deep {
            guard case .failure(let e) = parse(body) else { Issue.record("accepted"); continue }
            #expect(e.message.hasPrefix("body is not JSON: nested deeper than 8 levels"))
        }
        #expect(parse(#"{"text": "x",}"#) == .failure(.badRequest("body is not JSON: a trailing comma is not JSON at line 1, column 14 (byte 13)")))
        #expect(parse("[[1,2,],]") == .failure(.badRequest("body is not JSON: a trailing comma is not JSON at line 1, column 7 (byte 6)")))
        #expect(parse("[[1e-400]]") == .failure(.badRequest("body is not JSON: a number too small for a double (it would read as 0) at line 1, column 3 (byte 2)")))
        guard case .failure(let e) = parse(String(repeating: " ", count: LocalAPI.maxBody) + "[]") else { Issue.record("accepted"); return }
        #expect(e.message.hasPrefix("body is not JSON: input is larger than 65536 bytes"))
    }

    @Test func keysCompareExactly() {
        #expect(LocalAPI.constantTimeEqual("abc", "abc"))
        #expect(!LocalAPI.constantTimeEqual("abc", "abd"))
        #expect(!LocalAPI.constantTimeEqual("abc", "abcd"))
        #expect(!LocalAPI.constantTimeEqual("", "a"))
    }
}
